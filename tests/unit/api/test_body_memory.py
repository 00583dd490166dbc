"""The memory large request bodies may hold at once (extender/api/body_memory.py)."""

from __future__ import annotations

import threading

import pytest

from extender.api.body_memory import BYTES_PER_SEPARATOR, TRIM_AFTER_BYTES, BodyMemory
from extender.api.http import HTTPProblem


def test_bodies_take_what_fits_and_give_it_back() -> None:
    memory = BodyMemory(1000, trim=None)
    assert memory.take(600) and not memory.take(500) and memory.held == 600
    memory.give_back(600)
    assert memory.take(1000) and memory.held == 1000


def test_a_declared_body_holds_its_size_only_past_the_small_size() -> None:
    memory = BodyMemory(1000, small=100, trim=None)
    assert memory.take_declared(100) == 0 and memory.held == 0  # small: never waits for the budget
    assert memory.take_declared(800) == 800 and memory.held == 800
    with pytest.raises(HTTPProblem) as refused:
        memory.take_declared(300)
    assert refused.value.status == 503 and "a request body of 300 bytes" in refused.value.message
    assert memory.held == 800
    with pytest.raises(HTTPProblem) as refused:  # a chunked body past the small size: what has arrived so far
        memory.take_or_refuse(300, None)
    assert refused.value.headers == ((b"retry-after", b"1"),) and "undeclared size" in refused.value.message
    assert memory.held == 800


def test_what_a_body_decodes_to_is_its_bytes_and_64_per_separator() -> None:
    memory = BodyMemory(10_000, trim=None)
    body = b'{"a":[1,2,3],"b":"x,y"}'  # 2 colons, 4 commas (one inside a string: counted all the same)
    assert memory.take(len(body))
    extra = memory.take_decoding(body, len(body))
    assert extra == 6 * BYTES_PER_SEPARATOR and memory.held == len(body) + extra


def test_a_body_that_would_decode_to_more_than_all_of_it_is_413_and_one_that_does_not_fit_now_503() -> None:
    memory = BodyMemory(1000, trim=None)
    with pytest.raises(HTTPProblem) as never:
        memory.take_decoding(b"0," * 100, 200)  # 200 + 64 x 100
    assert never.value.status == 413 and "would decode to about 6600 bytes" in never.value.message
    assert memory.held == 0
    assert memory.take(500)
    body = b"[" + b"1," * 5 + b"1]" + b" " * 100  # 113 bytes, 5 separators: 433
    with pytest.raises(HTTPProblem) as later:
        memory.take_decoding(body + b" " * 200, 0)  # 313 + 320 beside the 500 held
    assert later.value.status == 503 and later.value.headers == ((b"retry-after", b"1"),)
    assert memory.held == 500


def test_free_memory_goes_back_to_the_system_once_per_trim_after_bytes_given_back() -> None:
    calls: list[int] = []
    done = threading.Event()

    def trim() -> None:
        calls.append(1)
        done.set()

    memory = BodyMemory(4 * TRIM_AFTER_BYTES, trim=trim)
    assert memory.take(TRIM_AFTER_BYTES)
    memory.give_back(TRIM_AFTER_BYTES - 1)
    assert not calls
    memory.give_back(1)
    assert done.wait(5) and calls == [1]
