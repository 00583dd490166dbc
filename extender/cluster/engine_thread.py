"""The engine thread: the one thread that reads and writes the scheduler cache.

Every verb's engine work (filter, prioritize, preempt, explain, the cache steps of bind) and every write from
the reflectors (lists, watch events, expiry of assumed pods) runs here, one call at a time and in the order
submitted. The cache therefore keeps a single writer, a request sees a cache that does not change under it,
and the event loop is left to I/O: health, readiness and metrics answer while a heavy request computes.
Small steps may instead run on the caller's thread, but only while the engine thread is idle and under the
lock it holds for every job (:meth:`EngineThread.run_here_if_idle`): still one at a time, still in order,
and never a heavy one (the callers pass only small bodies, single events and bind's cache steps).

Admission is bounded: at most ``max_pending`` requests wait or run at once (past it :class:`Overloaded`,
answered 503 with Retry-After), and a request that has not finished within ``timeout`` seconds is abandoned
(:class:`Overloaded` too; if it had not started yet it never runs). Cache writes from the source are never
refused: dropping a watch event would leave the cache wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

log = logging.getLogger("extender.engine")

T = TypeVar("T")

DEFAULT_MAX_PENDING = 128
# A cache write from the source whose function last took less CPU time than this runs on the caller's thread when
# the engine is idle (one watch event: tens of microseconds); list pages, relists and anything slow stay on
# the engine thread.
QUICK_WRITE_SECONDS = 0.001
# A small verb request (see EngineThread.request's ``quick``) runs on the caller's thread only while the last
# one of its kind took less CPU than this: a first request builds indexes over the whole cluster (a second
# or more at 5000 nodes), and that must never hold the event loop that answers probes.
QUICK_REQUEST_SECONDS = 0.005
_MAX_TIMED_FUNCTIONS = 256
DEFAULT_TIMEOUT_SECONDS = 10.0
#: Seconds one job may run before the service reports itself stuck (liveness fails; ``--stall-timeout``).
DEFAULT_STALL_TIMEOUT_SECONDS = 60.0


class Overloaded(RuntimeError):
    """A request refused or abandoned because the engine is saturated; ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Job:
    __slots__ = ("abandoned", "args", "context", "fn", "future", "loop", "timed")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop,
                 future: asyncio.Future[Any]) -> None:
        self.fn = fn
        self.args = args
        self.loop = loop
        self.future = future
        # The caller's context (request id for logs) travels with the work.
        self.context = contextvars.copy_context()
        self.abandoned = False
        # (key, threshold) when the job's CPU time decides whether the next one of that key may run on the
        # caller's thread (see _timed); None otherwise.
        self.timed: tuple[Hashable, float] | None = None


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """No garbage collection while a step runs (reference counting still frees as it goes)."""
    collect = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collect:
            gc.enable()


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class EngineThread:
    """Runs submitted callables on one dedicated thread, in order; awaitable from the event loop."""

    def __init__(self, *, max_pending: int = DEFAULT_MAX_PENDING, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 name: str = "engine") -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.max_pending = max_pending
        self.timeout = timeout
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._pending = 0  # admitted requests not finished yet (only touched on the loop thread)
        self.name = name
        self._thread: threading.Thread | None = None
        self._started = False
        self.busy_since = 0.0  # monotonic start of the job running now, 0 when idle (for reports)
        # Held while a job runs, on whichever thread runs it: the cache is never touched by two at once.
        self._running = threading.Lock()
        self._submitted = 0  # jobs queued so far (written under _count_lock)
        self._finished = 0  # jobs the engine thread has finished or skipped (written by it alone)
        self._count_lock = threading.Lock()
        self._quick: dict[Hashable, bool] = {}  # a write's function or a request's kind -> its last run was quick

    @property
    def pending(self) -> int:
        """Requests admitted and not finished."""
        return self._pending

    def start(self) -> None:
        """Start the thread (idempotent)."""
        if not self._started:
            self._started = True
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._work, args=(self._queue,), name=self.name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Finish the queued work, then end the thread."""
        if self._started and self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._started = False

    def running_for(self) -> float:
        """Seconds the job running now has been running (0 when idle): a job far past ``timeout`` means the
        thread is wedged, which readiness and liveness report."""
        since = self.busy_since
        return time.monotonic() - since if since else 0.0

    def in_engine(self) -> bool:
        """Whether the caller runs on the engine thread."""
        return threading.current_thread() is self._thread

    def _work(self, jobs: queue.SimpleQueue[_Job | None]) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            with self._running:
                outcome = self._run(job)
                self._finished += 1
            # Answered once the cache is free again, so that the caller may run its next small step at once.
            if outcome is not None:
                if not outcome[0]:
                    # The frames the exception passed through are finished: drop their locals. They hold the
                    # request's data and the job, whose future holds the exception: a cycle that would keep
                    # all of it until a full collection, which the thresholds make rare. Before the answer,
                    # never after: once the caller has it, its own frames join the traceback as it re-raises
                    # it, and clearing a suspended coroutine's frame from here would close that coroutine (a
                    # request that then never answers).
                    traceback.clear_frames(outcome[1].__traceback__)
                self._answer(job, *outcome)
            del job, outcome
            # The collection that was due during the job runs now, over what reference counting left.
            if gc.isenabled() and gc.get_count()[0] > gc.get_threshold()[0]:
                gc.collect(0)

    def _run(self, job: _Job) -> tuple[bool, Any] | None:
        """Run a job (None if it was abandoned before it started): (True, value) or (False, exception)."""
        if job.abandoned:
            return None
        self.busy_since = time.monotonic()
        started = time.thread_time()  # CPU time: waiting for the interpreter or a core is not the step's cost
        # No collection while a job runs: the objects a large request decodes are alive until it ends,
        # and a young collection over them holds the interpreter for tens to hundreds of milliseconds,
        # during which the event loop cannot answer a probe. Reference counting frees them when the job
        # ends.
        try:
            with _no_collection():
                return True, job.context.run(job.fn, *job.args)
        except BaseException as err:  # handed to the awaiting caller, which decides
            return False, err
        finally:
            self.busy_since = 0.0
            if job.timed is not None:
                self._timed(*job.timed, time.thread_time() - started)

    def _timed(self, key: Hashable, threshold: float, seconds: float) -> None:
        if key in self._quick or len(self._quick) < _MAX_TIMED_FUNCTIONS:
            self._quick[key] = seconds < threshold

    def _run_here_timed(self, key: Hashable, threshold: float, fn: Callable[..., T], *args: Any,
                        ) -> tuple[bool, T | None]:
        """run_here_if_idle when the last run under ``key`` was quick, timing this one for the next."""
        if not self._quick.get(key):
            return False, None
        # Wall time here, CPU time on the engine thread: on this thread the step holds the interpreter from
        # start to end, so the two differ only by the OS preempting it (which errs toward the engine thread,
        # the safe side), and reading the thread's CPU clock is a system call (several microseconds on a
        # virtual machine, twice for every verb and every watch event) where perf_counter is not.
        started = time.perf_counter()
        done, value = self.run_here_if_idle(fn, *args)
        if done:
            self._timed(key, threshold, time.perf_counter() - started)
        return done, value

    @staticmethod
    def _answer(job: _Job, ok: bool, value: Any) -> None:
        try:
            job.loop.call_soon_threadsafe(_settle, job.future, ok, value)
        except RuntimeError:  # the loop closed meanwhile (shutdown): nobody is waiting any more
            log.debug("engine answer dropped: the event loop is closed")

    def _submit(self, fn: Callable[..., T], args: tuple[Any, ...], *, timed: tuple[Hashable, float] | None = None,
                ) -> tuple[_Job, asyncio.Future[T]]:
        if not self._started:
            self.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        job = _Job(fn, args, loop, future)
        job.timed = timed
        with self._count_lock:
            self._submitted += 1
        self._queue.put(job)
        return job, future

    def idle(self) -> bool:
        """Nothing queued or running on the engine thread."""
        return self._submitted == self._finished and not self._running.locked()

    def run_here_if_idle(self, fn: Callable[..., T], *args: Any) -> tuple[bool, T | None]:
        """Run ``fn`` on the calling thread at once if the engine thread is idle: (True, its value); else
        (False, None) and nothing ran.

        For small steps on the event loop: handing them to the engine thread costs two thread wake-ups,
        more than the step itself. The engine-thread lock is held while ``fn`` runs, so the cache still sees
        one caller at a time, and nothing submitted earlier is still waiting (order is kept)."""
        if self._submitted != self._finished or not self._running.acquire(blocking=False):
            return False, None
        try:
            if self._submitted != self._finished:  # queued between the check and the lock
                return False, None
            with _no_collection():  # as on the engine thread
                return True, fn(*args)
        finally:
            self._running.release()

    def write_now(self, fn: Callable[..., object], *args: Any) -> bool:
        """Run a cache write from the source on the calling thread if it may run there now (True), as
        :meth:`write` would; else nothing ran (False), and the caller hands it to :meth:`write`, in order."""
        done, _ = self._run_here_timed(fn, QUICK_WRITE_SECONDS, fn, *args)
        return done

    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run cache work from the source (or an internal step) on the engine thread: never refused.

        A write whose function ran quickly last time (a watch event, not a list page) runs on the calling
        thread instead when the engine is idle (see run_here_if_idle): per pod, kube-scheduler's binding
        brings watch events that would otherwise contend with its filter and prioritize for the thread."""
        done, value = self._run_here_timed(fn, QUICK_WRITE_SECONDS, fn, *args)
        if done:
            return value  # type: ignore[return-value]  # fn's own value
        # Shielded: if the caller goes away, the write still happens, in order (it must not be lost).
        _, future = self._submit(fn, args, timed=(fn, QUICK_WRITE_SECONDS))
        return await asyncio.shield(future)

    async def request(self, fn: Callable[..., T], *args: Any, quick: Hashable | None = None) -> T:
        """Run a request's engine work: refused past ``max_pending``, abandoned after ``timeout``.

        With ``quick`` (a kind of request the caller judged small: a verb with a small body), the work runs
        on the calling thread when the engine is idle and the last request of that kind took under
        QUICK_REQUEST_SECONDS of CPU; timed there or on the engine thread, it decides for the next one."""
        if quick is not None:
            done, value = self._run_here_timed(quick, QUICK_REQUEST_SECONDS, fn, *args)
            if done:
                return value  # type: ignore[return-value]  # fn's own value
        if self._pending >= self.max_pending:
            raise Overloaded(f"the extender is saturated: {self._pending} requests are already waiting for the "
                             f"engine (limit {self.max_pending}); retry shortly")
        self._pending += 1
        job, future = self._submit(fn, args, timed=(quick, QUICK_REQUEST_SECONDS) if quick is not None else None)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError as err:
            job.abandoned = True
            traceback.clear_frames(err.__traceback__)
            raise Overloaded(f"the engine did not answer within {self.timeout:g} seconds; retry shortly") from None
        except asyncio.CancelledError:
            job.abandoned = True  # nobody waits for it: skip it if it has not started
            raise
        except BaseException as err:
            # The frames the exception came through (asyncio.wait_for's, this one's) hold the future, which
            # holds the exception: a cycle that would keep the request's data until a full collection, which
            # the collector's thresholds make rare. Their locals are dropped (this frame's by hand).
            del job, future
            traceback.clear_frames(err.__traceback__)
            raise
        finally:
            self._pending -= 1
