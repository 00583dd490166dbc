"""bench/watch_paced.py on a few events: both sides see every event of the stand-in apiserver's paced watch."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import watch_paced


@pytest.mark.parametrize("side", ["reflector", "floor"])
def test_each_side_is_timed_over_every_event(tmp_path: Path, side: str) -> None:
    watch_paced.write_inputs(tmp_path, events=40, pace_ms=1.0)
    # The reflector's side checks that its cache holds all 20 pods (it raises otherwise); the floor's counts
    # the events in the bytes, and would wait past the last one if it missed one.
    figures = watch_paced.worker(tmp_path / side)
    assert figures["events"] == 39 and figures["us_per_event"] > 0
