"""bench/bind_paced.py on a few POSTs: each side's POSTs are answered by the stand-in apiserver and timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import bind_paced


@pytest.mark.parametrize("side", ["binder", "floor"])
def test_each_side_is_timed_over_every_post(tmp_path: Path, side: str) -> None:
    bind_paced.write_inputs(tmp_path, posts=30, pace_ms=1.0)
    # The binder's side raises unless every POST is answered 201; the floor's waits for each answer's bytes
    # (and times out on one that does not come).
    figures = bind_paced.worker(tmp_path / side)
    assert figures["posts"] == 30 and figures["us_per_post"] > 0
