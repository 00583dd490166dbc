"""The memory that request bodies may hold at once, every connection and route together.

``--max-body-bytes`` bounds one body (256 MiB by default: a 5000-node NodeList fits), not how many are held:
twenty connections each sending a 249 MiB body, slowly, within the read timeout, made the process hold 5 GB,
and at the connection cap it would have been 128 GB; a container is killed long before. Bodies larger than
:data:`SMALL_BODY_BYTES` therefore draw their size from one budget (``--max-body-memory``, by default
:data:`BODY_MEMORY_FACTOR` times ``--max-body-bytes``) from when their head arrives until their request is
answered; a body that does not fit is refused at once with 503 and ``Retry-After``, before any of it is read,
and nothing already held is touched. Smaller bodies never wait for it, so that kube-scheduler's own requests
(names only: tens of KB, even at 5000 nodes) are answered however much of it an attacker holds; together they
are bounded by the connection cap (512 × 512 KiB).

A body whose size is declared (Content-Length) takes it whole before it is read; a chunked one takes what has
arrived as it passes the small size. Once a large body has arrived, what it will decode to is taken too: JSON
becomes several times its size in Python objects (a 5000-node NodeList of 10.5 MB decodes to 56 MB; 200 MB of
``0,0,0,...`` to 7.5 GB), so the estimate is its bytes plus :data:`BYTES_PER_SEPARATOR` for each comma and
colon (a separator starts a value or a key: each becomes an object; those inside strings only make the estimate
larger). A body whose estimate exceeds the whole budget gets 413, one that does not fit now 503. The service's
event loop is the only thread that takes and gives back, so no lock is needed.

What is given back is freed, but glibc's allocator keeps most of it: the bodies arrive in reads of up to
256 KiB, below its mmap threshold once that has grown, and twenty connections' 2 GB stayed in the process
after they were gone. Each time :data:`TRIM_AFTER_BYTES` more have been given back, ``malloc_trim`` hands the
free pages back to the system, on a thread of its own (it takes about 75 ms for 2 GB, without the GIL):
the process then weighs what it did before (132 MB there).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from collections.abc import Callable

from extender.api.http import HTTPProblem

log = logging.getLogger("extender.api")

SMALL_BODY_BYTES = 512 * 1024
RETRY_AFTER_SECONDS = 1
# What a JSON value or key costs once decoded, beyond its text: a list or dict slot and the object's header
# (an int, a str, msgspec's Raw for a member decoded on its own). Calibrated on the bench's 5000-node NodeList
# (10.5 MB, 779,180 separators, 56 MB decoded; this estimate: 58 MB).
BYTES_PER_SEPARATOR = 64
BODY_MEMORY_FACTOR = 8  # the default budget: this many times --max-body-bytes
TRIM_AFTER_BYTES = 64 * 1024 * 1024


def libc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none (musl, macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


_LIBC_TRIM = libc_trim()


class BodyMemory:
    """The budget: ``limit`` bytes that bodies over ``small`` bytes may hold at once."""

    __slots__ = ("_given_back", "_trim", "_trimming", "held", "limit", "small")

    def __init__(self, limit: int, small: int = SMALL_BODY_BYTES,
                 trim: Callable[[], object] | None = _LIBC_TRIM) -> None:
        self.limit = limit
        self.small = small
        self.held = 0
        self._trim = trim  # hands free memory back to the system (None: not done)
        self._given_back = 0  # since the last trim
        self._trimming = False

    def take(self, size: int) -> bool:
        """Hold ``size`` more bytes if they fit; False (nothing held) if they do not."""
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def take_or_refuse(self, more: int, size: int | None, decoded: int | None = None) -> None:
        """Hold ``more`` bytes for a body of ``size`` bytes (None: one of undeclared size); the refusal (503,
        see :meth:`refusal`) if they do not fit, nothing taken."""
        if not self.take(more):
            raise self.refusal(size, decoded)

    def take_declared(self, size: int) -> int:
        """For a body declared ``size`` bytes long: the bytes it holds (0 for a small one); the refusal (503)
        if it does not fit, nothing taken."""
        if size <= self.small:
            return 0
        self.take_or_refuse(size, size)
        return size

    def give_back(self, size: int) -> None:
        """Release bytes taken before (and, every TRIM_AFTER_BYTES, the free memory to the system)."""
        self.held -= size
        self._given_back += size
        if self._given_back >= TRIM_AFTER_BYTES and self._trim is not None and not self._trimming:
            self._given_back = 0
            self._trimming = True
            threading.Thread(target=self._trimmed, name="malloc-trim", daemon=True).start()

    def _trimmed(self) -> None:
        try:
            assert self._trim is not None
            self._trim()
        except Exception:  # never fatal: the memory stays in the process, as without it
            log.exception("returning free memory to the system failed")
        finally:
            self._trimming = False

    def take_decoding(self, body: bytes, held: int) -> int:
        """Take what ``body`` (a large one, ``held`` bytes of which are taken) will decode to, beyond ``held``:
        the bytes taken more; 413 if the estimate exceeds the budget, 503 if it does not fit now."""
        estimate = len(body) + BYTES_PER_SEPARATOR * (body.count(b",") + body.count(b":"))
        if estimate > self.limit:
            raise HTTPProblem(413, f"request body of {len(body)} bytes would decode to about {estimate} bytes, "
                                   f"more than request bodies may hold at once ({self.limit} bytes, "
                                   "--max-body-memory)", "too_large")
        extra = max(estimate - held, 0)
        self.take_or_refuse(extra, len(body), decoded=estimate)
        return extra

    def refusal(self, size: int | None, decoded: int | None = None) -> HTTPProblem:
        """503 for a body of ``size`` bytes (None: a chunked one, so far) that does not fit."""
        what = f"a request body of {size} bytes" if size is not None else "a request body of undeclared size"
        if decoded is not None:
            what += f" (about {decoded} bytes decoded)"
        return HTTPProblem(503, f"the extender is saturated: {what} does not fit in the memory request bodies may "
                                f"hold at once ({self.limit} bytes, --max-body-memory; {self.held} held); "
                                "retry later", "body_memory",
                           headers=((b"retry-after", b"%d" % RETRY_AFTER_SECONDS),))
