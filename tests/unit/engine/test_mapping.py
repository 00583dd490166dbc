"""Mapping weighted totals to the extender's 0..10: always in range, monotone, documented rounding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from extender.engine.mapping import absolute, map_scores, minmax


def test_absolute_is_the_weighted_mean_over_ten_rounded_half_up() -> None:
    # weights 3+2 = 5; totals up to 500
    assert absolute([0, 500, 250, 24, 25, 26, 474, 475], 5) == [0, 10, 5, 0, 1, 1, 9, 10]
    assert absolute([5, 10], 1, max_score=10) == [5, 10]  # 0-10 era plugins: the mean itself
    assert absolute([100], 0) == [0]


def test_minmax_stretches_candidates() -> None:
    assert minmax([300, 320, 340]) == [0, 5, 10]
    assert minmax([7, 7]) == [0, 0]
    assert minmax([]) == []


@given(st.lists(st.integers(0, 100), min_size=1, max_size=40), st.lists(st.integers(1, 10), min_size=1, max_size=8),
       st.sampled_from(["absolute", "minmax"]))
def test_answers_are_integers_in_range_and_monotone(raw: list[int], weights: list[int], mode: str) -> None:
    weight = sum(weights)
    totals = [r * weight for r in raw]  # every plugin scoring r: total = r * W
    mapped = map_scores(totals, weight, mode)
    assert all(isinstance(m, int) and 0 <= m <= 10 for m in mapped)
    for (t1, m1) in zip(totals, mapped, strict=True):
        for (t2, m2) in zip(totals, mapped, strict=True):
            if t1 <= t2:
                assert m1 <= m2
    if mode == "absolute":
        assert mapped == [(r * 10 + 50) // 100 for r in raw]
