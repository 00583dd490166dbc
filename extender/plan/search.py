"""The smallest count of a pool that places everything, found by simulating.

For a variant V and a pool P, let ``fits(n)`` say that V with n more nodes of P places every pod (no pod
pending). The search is a galloping search followed by a bisection, both parallel:

1. ``fits(0)`` is V itself (already simulated). If it holds, the answer is 0.
2. Gallop: try n = 1, 2, 4, 8, ... (capped at ``max``) until one fits; the last that did not and the first
   that did bracket the answer. Trying doublings finds a small answer in few steps and a large one in
   log2(answer) steps.
3. Bisect the bracket (lo fails, hi fits) until hi = lo + 1.

Each round simulates k points of every unfinished search at once (the next k doublings, or k points evenly
spaced inside the bracket: a k+1-ary search), all in one batch for the engine's workers. k is the plan's
``search.pointsPerRound`` (default 4), not the number of workers, so the points tried, and so the whole
result, are the same on every engine and worker count; a larger k takes fewer rounds on a larger cluster.

**Why it is valid, and what is checked.** Bisection finds the smallest n only if ``fits`` is monotone
(once n nodes suffice, n + 1 do too). For kube-scheduler this is the common case, not a law: pods are
placed greedily one at a time by score, so more nodes change where early pods go, and with hard
anti-affinity, topology-spread constraints or fragmentation a later pod can, in principle, stop fitting.
So the answer is not taken on trust: the answer N and N - 1 are both simulated in full and reported
(N places everything, N - 1 leaves pods pending, with their reasons), which makes "N is a count that
places everything and N - 1 is not" exact whatever ``fits`` looks like; and any point tried that
contradicts monotonicity (a smaller count that fit, a larger one that did not) is reported beside the
answer, with ``monotone: false``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.plan.evaluate import Task
from extender.plan.planfile import Variant
from extender.plan.results import VariantResult

Runner = Callable[[Sequence[Task]], list[VariantResult]]


@dataclass
class SearchResult:
    """One variant's search: the answer (None: not found up to ``max``), the two simulations that prove it,
    and every count tried with the pods left pending there."""

    variant: str
    pool: str
    max: int
    pods: int = 0  # pods to place (the same at every count)
    found: int | None = None
    at_found: VariantResult | None = None
    below_found: VariantResult | None = None
    tried: dict[int, int] = field(default_factory=dict)  # count -> pods pending
    monotone: bool = True
    rounds: int = 0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "variant": self.variant, "pool": self.pool, "max": self.max, "pods": self.pods, "found": self.found,
            "monotone": self.monotone, "rounds": self.rounds,
            "tried": [{"count": n, "pending": p} for n, p in sorted(self.tried.items())],
            "verified": None if self.found is None else {
                "atFound": _brief(self.at_found), "belowFound": _brief(self.below_found)},
        }


def _brief(result: VariantResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"added": result.added, "nodes": result.nodes, "placed": result.placed, "pending": result.pending,
            "pendingReasons": result.pending_reasons, "costPerHour": result.cost_per_hour}


class _Search:
    """The state of one search between rounds."""

    def __init__(self, variant: Variant, pool: str, maximum: int, baseline: VariantResult) -> None:
        self.variant = variant
        self.result = SearchResult(variant.name, pool, maximum, baseline.pods)
        self.results: dict[int, VariantResult] = {0: baseline}
        self.result.tried[0] = baseline.pending
        self.lo: int | None = None  # largest count known not to fit
        self.hi: int | None = None  # smallest count known to fit
        self._update()

    def _update(self) -> None:
        fits = sorted(n for n, r in self.results.items() if r.pending == 0)
        fails = sorted(n for n, r in self.results.items() if r.pending > 0)
        self.hi = fits[0] if fits else None
        below = [n for n in fails if self.hi is None or n < self.hi]
        self.lo = below[-1] if below else None

    @property
    def done(self) -> bool:
        if self.hi is None:
            return max(self.results) >= self.result.max
        return self.hi == 0 or (self.lo is not None and self.hi - self.lo == 1)

    def next_points(self, k: int) -> list[int]:
        """The next k counts to try (fewer when fewer are left)."""
        tried = set(self.results)
        if self.hi is None:  # gallop
            points: list[int] = []
            n = max(self.results)
            while len(points) < k and n < self.result.max:
                n = min(max(1, 2 * n), self.result.max)
                if n not in tried:
                    points.append(n)
            return points
        lo = self.lo if self.lo is not None else 0
        gap = self.hi - lo
        step = gap / (min(k, gap - 1) + 1)
        return sorted({lo + max(1, round(step * (i + 1))) for i in range(min(k, gap - 1))} - tried - {self.hi})

    def record(self, count: int, result: VariantResult) -> None:
        self.results[count] = result
        self.result.tried[count] = result.pending
        self._update()

    def finish(self) -> SearchResult:
        out = self.result
        if self.hi is not None:
            out.found = self.hi
            out.at_found = self.results[self.hi]
            out.below_found = self.results.get(self.hi - 1)
            out.monotone = all((r.pending == 0) == (n >= self.hi) for n, r in self.results.items())
        else:
            out.monotone = all(r.pending > 0 for r in self.results.values())
        return out


def smallest_counts(variants: Sequence[Variant], baselines: Sequence[VariantResult], pool: str, maximum: int,
                    points_per_round: int, run: Runner, keep_placements: bool = False) -> list[SearchResult]:
    """Search every variant at once, each round's simulations (``points_per_round`` per search) in one batch."""
    searches = [_Search(v, pool, maximum, b) for v, b in zip(variants, baselines, strict=True)]
    while True:
        active = [s for s in searches if not s.done]
        if not active:
            break
        batch: list[tuple[_Search, int]] = [(s, n) for s in active for n in s.next_points(points_per_round)]
        results = run([Task(s.variant.with_nodes(pool, n), keep_placements) for s, n in batch])
        for (search, count), result in zip(batch, results, strict=True):
            search.record(count, result)
        for search in active:
            search.result.rounds += 1
    for search in searches:  # the proof of the answer: N - 1 simulated too (bisection ends there already)
        if search.hi is not None and search.hi > 0 and search.hi - 1 not in search.results:
            missing = search.hi - 1
            search.record(missing, run([Task(search.variant.with_nodes(pool, missing), keep_placements)])[0])
    return [s.finish() for s in searches]
