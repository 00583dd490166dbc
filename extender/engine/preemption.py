"""The preempt verb: on which candidate nodes would the pod pass our filters once the victims are gone?

kube-scheduler proposes, per node, the pods it would evict. For each node we remove those victims from
a copy of the node, run the profile's PreFilter and Filter on a snapshot holding that copy, and keep the
node only if the pod then fits. Like upstream's DefaultPreemption (selectVictimsOnNode), we then try to
reprieve victims, highest priority first, keeping any whose return still lets the pod fit, so that the
answer evicts no more than our filters need. A reprieve that would leave no victim at all is not
applied (kube-scheduler rejects an answer without victims), and victims are always a subset of those
proposed, so every UID we return is a pod kube-scheduler knows on that node.

A node the cache does not know is dropped: we cannot say the pod would fit there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import CycleState
from extender.engine.runtime import Framework


@dataclass
class Candidate:
    """Victims proposed (or answered) for one node."""

    victims: list[str]  # UIDs (or namespace/name for pods without one)
    num_pdb_violations: int = 0


def _fits(framework: Framework, snapshot: Snapshot, pod: PodRecord, node: NodeInfo) -> bool:
    trial = Snapshot.from_node_infos((node if n.name == node.name else n for n in snapshot.node_list),
                                     snapshot.objects, snapshot.dra)
    state = CycleState(trial)
    result = framework.filter(state, pod, [node])
    return result.error is None and bool(result.feasible)


def _remove(info: NodeInfo, victims: Sequence[PodRecord]) -> None:
    for victim in victims:
        info.remove_pod(victim)


def process_preemption(framework: Framework, snapshot: Snapshot, pod: PodRecord,
                       candidates: Mapping[str, Candidate]) -> dict[str, Candidate]:
    """The nodes (with victims) on which the pod passes our filters after eviction."""
    answer: dict[str, Candidate] = {}
    for node_name, candidate in candidates.items():
        cached = snapshot.get(node_name)
        if cached is None:
            continue
        wanted = set(candidate.victims)
        victims = [p for p in cached.pods if p.cache_key in wanted]
        if not victims:
            continue  # none of the proposed pods is on this node as we see it
        trial = cached.clone()
        _remove(trial, victims)
        if not _fits(framework, snapshot, pod, trial):
            continue
        # Reprieve: highest priority first (upstream sorts by importance), keeping those that still fit.
        still_evicted: list[PodRecord] = []
        for victim in sorted(victims, key=lambda p: -p.priority):
            trial.add_pod(victim)
            if not _fits(framework, snapshot, pod, trial):
                trial.remove_pod(victim)
                still_evicted.append(victim)
        if not still_evicted:
            still_evicted = victims  # never answer a node without victims
        keys = {p.cache_key for p in still_evicted}
        answer[node_name] = Candidate([uid for uid in candidate.victims if uid in keys],
                                      candidate.num_pdb_violations)
    return answer

