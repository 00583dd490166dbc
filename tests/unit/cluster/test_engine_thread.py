"""The engine thread's small-step path: a step runs on the caller's thread only when nothing else would run
on the cache at the same time or before it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

import pytest

from extender.cluster import engine_thread
from extender.cluster.engine_thread import EngineThread, Overloaded


def test_a_step_runs_here_when_the_engine_is_idle() -> None:
    engine = EngineThread()

    async def scenario() -> None:
        assert await engine.request(lambda: "warm") == "warm"  # the thread has started and finished its job
        done, value = engine.run_here_if_idle(lambda: threading.current_thread())
        assert done and value is threading.current_thread()
        assert engine.idle()

    asyncio.run(scenario())
    engine.stop()


def test_a_step_is_refused_while_a_job_runs_or_waits_and_order_is_kept() -> None:
    engine = EngineThread()
    started = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(5)
        order.append("queued first")

    async def scenario() -> None:
        running = asyncio.ensure_future(engine.write(slow))
        await asyncio.sleep(0)
        assert started.wait(5)
        queued = asyncio.ensure_future(engine.write(order.append, "queued second"))
        await asyncio.sleep(0)
        done, _ = engine.run_here_if_idle(order.append, "here")
        assert not done and not engine.idle()  # nothing ran here: the cache is the engine's
        release.set()
        await running
        await queued
        done, _ = engine.run_here_if_idle(order.append, "here")
        assert done

    asyncio.run(scenario())
    engine.stop()
    assert order == ["queued first", "queued second", "here"]


def test_an_error_of_a_step_run_here_reaches_the_caller_and_frees_the_engine() -> None:
    engine = EngineThread()

    def fails() -> None:
        raise ValueError("bad step")

    async def scenario() -> None:
        await engine.request(lambda: None)
        try:
            engine.run_here_if_idle(fails)
        except ValueError as err:
            assert str(err) == "bad step"
        else:
            raise AssertionError("the error was swallowed")
        assert await engine.request(lambda: "still serving") == "still serving"
        assert engine.run_here_if_idle(lambda: 1) == (True, 1)

    asyncio.run(scenario())
    engine.stop()


def test_a_write_runs_here_only_once_its_function_has_proved_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_thread, "QUICK_WRITE_SECONDS", 0.05)  # wide margins on a busy machine
    engine = EngineThread()
    threads: list[str] = []

    def quick() -> None:
        threads.append(threading.current_thread().name)

    def slow() -> None:
        threads.append(threading.current_thread().name)
        started = time.thread_time()
        while time.thread_time() - started < 0.1:  # more CPU than QUICK_WRITE_SECONDS
            pass

    async def scenario() -> None:
        for _ in range(3):
            await engine.write(quick)
        for _ in range(2):
            await engine.write(slow)

    asyncio.run(scenario())
    engine.stop()
    here = threading.current_thread().name
    assert threads == ["engine", here, here, "engine", "engine"]


def test_a_small_request_runs_here_only_while_its_kind_stays_quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first request of a kind (which may build cluster-wide indexes) and any request after a slow one run
    on the engine thread: a slow request on the event loop would hold the health probes."""
    monkeypatch.setattr(engine_thread, "QUICK_REQUEST_SECONDS", 0.05)
    engine = EngineThread()
    threads: list[str] = []

    def work(cpu_seconds: float) -> None:
        threads.append(threading.current_thread().name)
        started = time.thread_time()
        while time.thread_time() - started < cpu_seconds:
            pass

    async def scenario() -> None:
        await engine.request(work, 0.0, quick="filter")  # first of its kind: on the engine thread
        await engine.request(work, 0.0, quick="filter")  # proved quick: here
        await engine.request(work, 0.1, quick="filter")  # still judged quick, so here; it was slow ...
        await engine.request(work, 0.0, quick="filter")  # ... so the next goes to the engine thread
        await engine.request(work, 0.0, quick="prioritize")  # another kind starts on the engine thread
        await engine.request(work, 0.0)  # no kind: always the engine thread

    asyncio.run(scenario())
    engine.stop()
    here = threading.current_thread().name
    assert threads == ["engine", here, here, "engine", "engine", "engine"]


def test_a_job_running_past_its_bounds_makes_the_service_unready_then_stuck() -> None:
    """Stalls reports a job past the request timeout (readiness fails) and past the stall timeout (liveness
    fails), for the engine and the multi-cluster placer alike; both recover when the job ends."""
    from extender.api.app import Stalls

    engine = EngineThread(timeout=0.2)
    placer = EngineThread(timeout=0.2, name="multicluster")
    stalls = Stalls({"engine": engine, "multicluster": placer}, stall_timeout=0.5)
    release = threading.Event()

    async def wedge() -> None:
        with contextlib.suppress(Overloaded):
            await engine.request(release.wait, 10)

    loop = asyncio.new_event_loop()
    try:
        task = loop.create_task(wedge())
        loop.run_until_complete(asyncio.sleep(0.05))
        assert stalls.ready() and not stalls.stuck() and "engine" in stalls.running()
        loop.run_until_complete(asyncio.sleep(0.3))
        assert not stalls.ready() and "engine" in stalls.late() and not stalls.stuck()
        loop.run_until_complete(asyncio.sleep(0.4))
        assert "engine" in stalls.stuck()
        release.set()
        loop.run_until_complete(task)
        deadline = time.monotonic() + 5
        while stalls.running() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stalls.ready() and not stalls.stuck() and not stalls.running()
    finally:
        engine.stop()
        placer.stop()
        loop.close()


def test_a_failed_job_answers_a_caller_that_suspends_while_holding_its_exception(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine thread drops the locals of a failed job's frames before it answers: once the caller has the
    exception, its own frames join the traceback as it re-raises it, and clearing a suspended coroutine's frame
    from the engine thread would close that coroutine (a request that never answers: seen as a hung 500 in
    the hardening tests, one run in six)."""
    engine = EngineThread()
    suspended = threading.Event()
    answer = EngineThread._answer

    def answer_then_wait(job: Any, ok: bool, value: Any) -> None:
        answer(job, ok, value)
        suspended.wait(5)  # the caller re-raises the exception and suspends before the engine goes on

    monkeypatch.setattr(EngineThread, "_answer", staticmethod(answer_then_wait))

    def fail() -> None:
        raise ValueError("a bug")

    async def caller() -> str:
        try:
            await engine.request(fail)
        except ValueError:
            suspended.set()
            await asyncio.sleep(0.2)  # suspended while holding the exception and its traceback
            return "answered"
        return "no exception"

    assert asyncio.run(asyncio.wait_for(caller(), 5)) == "answered"
    engine.stop()
