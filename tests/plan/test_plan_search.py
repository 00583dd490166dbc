"""The smallest-count search: gallop then bisect, N and N - 1 both simulated, non-monotone points reported.

The runner here is a function of the count alone (pods pending at n nodes), standing for simulate."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from extender.plan.evaluate import Task
from extender.plan.planfile import Variant
from extender.plan.results import VariantResult
from extender.plan.search import smallest_counts


def _runner(pending_at: Callable[[int], int], calls: list[int]) -> Callable[[Sequence[Task]], list[VariantResult]]:
    def run(tasks: Sequence[Task]) -> list[VariantResult]:
        out = []
        for task in tasks:
            n = dict(task.variant.add_nodes).get("p", 0)
            calls.append(n)
            out.append(VariantResult(task.variant.name, pods=10, pending=pending_at(n), added={"p": n}))
        return out
    return run


def _search(pending_at: Callable[[int], int], maximum: int = 100, k: int = 1) -> tuple[object, list[int]]:
    calls: list[int] = []
    baseline = VariantResult("v", pods=10, pending=pending_at(0))
    [result] = smallest_counts([Variant("v")], [baseline], "p", maximum, k, _runner(pending_at, calls))
    return result, calls


@pytest.mark.parametrize("answer", [1, 2, 3, 7, 13, 64, 99, 100])
@pytest.mark.parametrize("k", [1, 3, 4])
def test_the_search_finds_the_threshold_and_proves_it(answer: int, k: int) -> None:
    result, calls = _search(lambda n: max(0, answer - n), k=k)
    assert result.found == answer and result.monotone  # type: ignore[attr-defined]
    assert result.at_found.pending == 0 and result.below_found.pending == 1  # type: ignore[attr-defined]
    assert answer in calls and (answer - 1 in calls or answer == 1)
    assert len(calls) <= k * 2 * (answer.bit_length() + 2)  # logarithmic, not a scan


def test_zero_when_the_variant_already_fits() -> None:
    result, calls = _search(lambda n: 0)
    assert result.found == 0 and calls == [] and result.below_found is None  # type: ignore[attr-defined]


def test_not_found_up_to_the_bound() -> None:
    result, calls = _search(lambda n: 5, maximum=20)
    assert result.found is None and max(calls) == 20 and result.monotone  # type: ignore[attr-defined]


def test_the_points_tried_depend_on_points_per_round_only() -> None:
    first, _ = _search(lambda n: max(0, 37 - n), k=4)
    second, _ = _search(lambda n: max(0, 37 - n), k=4)
    assert first == second


def test_a_count_that_contradicts_monotonicity_is_reported() -> None:
    # 2 fits by luck, 4 does not, 8 does: the first round (k = 4) tries 1, 2, 4 and 8 at once. The answer is
    # the boundary it can prove (2 fits, 1 does not), and the failing 4 above it is flagged.
    result, calls = _search(lambda n: 0 if n == 2 or n >= 8 else 1, k=4)
    assert calls == [1, 2, 4, 8]
    assert result.found == 2 and result.below_found.pending == 1  # type: ignore[attr-defined]
    assert not result.monotone and result.tried[4] == 1  # type: ignore[attr-defined]
