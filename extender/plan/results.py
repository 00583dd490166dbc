"""What a variant's simulation comes to: pods placed and pending (with simulate's reasons), utilization per
resource and per zone, and cost.

Everything here is computed from the simulation's own outcome and the variant's final cache, in a fixed
order, so a result is the same value whichever engine or worker computed it (results compare equal).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.engine.simulate import SimulationResult
from extender.plan.planfile import Price

_FIT_ERROR = re.compile(r"^0/\d+ nodes are available: (.*)\.$", re.DOTALL)
_COUNTED = re.compile(r"^(\d+) (.+)$", re.DOTALL)
NO_ZONE = "(no zone)"
PREEMPTED = "preempted by a pod placed after it"


def pending_reasons(message: str) -> list[tuple[int, str]]:
    """The (nodes, reason) pairs of a pending pod's FitError histogram; a message that is no histogram (a
    PreFilter rejection, an error) is one reason that stands for every node (count 0)."""
    match = _FIT_ERROR.match(message)
    if match is None:
        return [(0, message)]
    parts = re.split(r", (?=\d+ )", match.group(1))
    counted = [_COUNTED.match(part) for part in parts]
    if all(counted):
        return [(int(m.group(1)), m.group(2)) for m in counted if m is not None]
    return [(0, match.group(1))]


def principal_reason(message: str) -> str:
    """What keeps a pod pending, in one reason: the one that rejected the most nodes (the first in the
    message's order on a tie)."""
    return max(pending_reasons(message), key=lambda pair: pair[0])[1]


@dataclass
class Usage:
    """Requested against allocatable, for one resource."""

    requested: int = 0
    allocatable: int = 0

    @property
    def percent(self) -> float:
        """Requested as a percentage of allocatable (0 when nothing is allocatable)."""
        return round(100 * self.requested / self.allocatable, 1) if self.allocatable else 0.0


@dataclass
class VariantResult:
    """One variant's outcome. ``pending_reasons`` counts pending pods by their principal reason (each pod
    once); ``pending_pods`` keeps every pending pod's full message; ``placements`` ((pod, node) of every placed
    pod) is kept when asked for."""

    name: str
    nodes: int = 0
    added: dict[str, int] = field(default_factory=dict)
    removed: int = 0
    cordoned: int = 0
    pods: int = 0
    placed: int = 0
    pending: int = 0
    displaced: int = 0
    lost: int = 0
    pending_reasons: dict[str, int] = field(default_factory=dict)
    pending_pods: list[tuple[str, str]] = field(default_factory=list)
    placements: list[tuple[str, str]] | None = None
    utilization: dict[str, Usage] = field(default_factory=dict)
    zones: dict[str, dict[str, Usage]] = field(default_factory=dict)
    cost_per_hour: float | None = None
    unpriced_nodes: int = 0
    profile: str = ""
    seed: int = 0
    percentage_of_nodes_to_score: int | None = None
    kubernetes_version: str = ""
    # What the simulation cost its worker (CPU seconds): a measurement, not part of the answer, so results
    # of different engines still compare equal.
    cpu_seconds: float = field(default=0.0, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the answer: without the CPU it cost)."""
        out = asdict(self)
        del out["cpu_seconds"]
        out["utilization"] = {r: {**asdict(u), "percent": u.percent} for r, u in self.utilization.items()}
        out["zones"] = {z: {r: {**asdict(u), "percent": u.percent} for r, u in usage.items()}
                        for z, usage in self.zones.items()}
        out["pending_pods"] = [{"pod": p, "message": m} for p, m in self.pending_pods]
        if self.placements is None:
            del out["placements"]
        else:
            out["placements"] = [{"pod": p, "node": n} for p, n in self.placements]
        return out


def _usage_of(info: NodeInfo) -> dict[str, tuple[int, int]]:
    assert info.node is not None
    alloc, used = info.node.allocatable, info.requested
    out = {"cpu": (used.milli_cpu, alloc.milli_cpu), "memory": (used.memory, alloc.memory),
           "pods": (len(info.pods), alloc.allowed_pods)}
    if alloc.ephemeral_storage or used.ephemeral_storage:
        out["ephemeral-storage"] = (used.ephemeral_storage, alloc.ephemeral_storage)
    for name in sorted(alloc.scalars.keys() | used.scalars.keys()):
        out[name] = (used.scalars.get(name, 0), alloc.scalars.get(name, 0))
    return out


def _add(table: dict[str, Usage], usage: Mapping[str, tuple[int, int]]) -> None:
    for name, (requested, allocatable) in usage.items():
        held = table.setdefault(name, Usage())
        held.requested += requested
        held.allocatable += allocatable


def node_price(name: str, labels: Mapping[str, str], pool_price: float | None, prices: Sequence[Price]) -> float | None:
    """A node's price per hour: its pool's, else the first matching price, else None."""
    if pool_price is not None:
        return pool_price
    return next((p.per_hour for p in prices if p.selector.matches(name, labels)), None)


def summarize(name: str, simulation: SimulationResult, cache: ClusterCache, *, zone_label: str,
              prices: Sequence[Price], pool_prices: Mapping[str, float | None], keep_placements: bool,
              **settings: Any) -> VariantResult:
    """A variant's result from its simulation and its final cache.

    ``pool_prices`` maps an added node's name to its pool's price; ``settings`` are recorded as they are
    (added, removed, cordoned, displaced, lost, profile, seed, percentage_of_nodes_to_score, kubernetes_version).
    """
    result = VariantResult(name, **settings)
    result.pods = len(simulation.placements)
    result.placed = len(simulation.scheduled)
    pending = simulation.unschedulable
    result.pending = len(pending)
    result.pending_pods = [(p.pod, p.message) for p in pending]
    reasons: dict[str, int] = {}
    for placement in pending:
        # The histogram is FitError's part; the PostFilter's words after it are about preemption's nodes.
        reason = PREEMPTED if placement.preempted_by else principal_reason(placement.fit_error or placement.message)
        reasons[reason] = reasons.get(reason, 0) + 1
    result.pending_reasons = dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0])))
    if keep_placements:
        result.placements = [(p.pod, p.node) for p in simulation.scheduled]
    total = 0.0
    priced = False
    nodes = cache.snapshot().node_list
    result.nodes = len(nodes)
    for info in nodes:
        assert info.node is not None
        usage = _usage_of(info)
        _add(result.utilization, usage)
        _add(result.zones.setdefault(info.node.labels.get(zone_label) or NO_ZONE, {}), usage)
        price = node_price(info.name, info.node.labels, pool_prices.get(info.name), prices)
        if price is None:
            result.unpriced_nodes += 1
        else:
            priced = True
            total += price
    result.zones = dict(sorted(result.zones.items()))
    result.cost_per_hour = round(total, 6) if priced else None
    return result


def reason_totals(results: Iterable[VariantResult]) -> dict[str, int]:
    """Pending pods per reason over several results (for charts)."""
    totals: dict[str, int] = {}
    for result in results:
        for reason, count in result.pending_reasons.items():
            totals[reason] = totals.get(reason, 0) + count
    return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))
