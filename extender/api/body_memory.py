"""The memory that request bodies may hold at once, every connection and route together.

``--max-body-bytes`` bounds one body (256 MiB by default: a 5000-node NodeList fits), not how many are held:
twenty connections each sending a 249 MiB body, slowly, within the read timeout, made the process hold 5 GB,
and at the connection cap it would have been 128 GB; a container is killed long before. Bodies larger than
:data:`SMALL_BODY_BYTES` therefore draw their size from one budget (``--max-body-memory``, by default twice
``--max-body-bytes``) from when their head arrives until their request is answered; a body that does not fit
is refused at once with 503 and ``Retry-After``, before any of it is read, and nothing already held is
touched. Smaller bodies never wait for it, so that kube-scheduler's own requests (names only: tens of KB, even
at 5000 nodes) are answered however much of it an attacker holds; together they are bounded by the connection
cap (512 × 512 KiB).

A body whose size is declared (Content-Length) takes it whole before it is read; a chunked one takes what has
arrived as it passes the small size. The service's event loop is the only thread that takes and gives back,
so no lock is needed.
"""

from __future__ import annotations

from extender.api.http import HTTPProblem

SMALL_BODY_BYTES = 512 * 1024
RETRY_AFTER_SECONDS = 1


class BodyMemory:
    """The budget: ``limit`` bytes that bodies over ``small`` bytes may hold at once."""

    __slots__ = ("held", "limit", "small")

    def __init__(self, limit: int, small: int = SMALL_BODY_BYTES) -> None:
        self.limit = limit
        self.small = small
        self.held = 0

    def take(self, size: int) -> bool:
        """Hold ``size`` more bytes if they fit; False (nothing held) if they do not."""
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        """Release bytes taken before."""
        self.held -= size

    def refusal(self, size: int | None) -> HTTPProblem:
        """503 for a body of ``size`` bytes (None: a chunked one, so far) that does not fit."""
        what = f"a request body of {size} bytes" if size is not None else "a request body of undeclared size"
        return HTTPProblem(503, f"the extender is saturated: {what} does not fit in the memory request bodies may "
                                f"hold at once ({self.limit} bytes, --max-body-memory; {self.held} held); "
                                "retry later", "body_memory",
                           headers=((b"retry-after", b"%d" % RETRY_AFTER_SECONDS),))
