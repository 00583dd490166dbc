"""The words of a failed scheduling cycle, as the pod's PodScheduled condition carries them.

Upstream: ``framework.FitError.Error()`` (``pkg/scheduler/framework/types.go``) and the PreFilter step of
``schedule_one.go`` (``findNodesThatFitPod``), kubernetes v1.36.3. The message is "0/N nodes are
available:", then the PreFilter rejection's message, or the sorted "<count> <reason>" histogram of each
rejected node's reasons (Go's byte-order sort); then, after a space, what the PostFilter plugins said
(for example "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

# ErrNoNodesAvailable: a cluster without nodes never reaches Filter (nor PostFilter).
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def fit_error_message(num_nodes: int, reasons_per_node: Iterable[Sequence[str]],
                      prefilter: str | None = None, post_filter: str = "") -> str:
    """FitError.Error(): the PreFilter rejection or the reasons' histogram, then the PostFilter's words."""
    message = f"0/{num_nodes} nodes are available:"
    if prefilter is not None:
        message += f" {prefilter}."
    else:
        counts: dict[str, int] = {}
        for reasons in reasons_per_node:
            for reason in reasons:
                counts[reason] = counts.get(reason, 0) + 1
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
        if histogram:
            message += f" {', '.join(histogram)}."
    if post_filter:
        message += f" {post_filter}"
    return message


def prefilter_narrowing(prefilter_nodes: Mapping[str, frozenset[str]]) -> tuple[frozenset[str] | None, str]:
    """The nodes PreFilter results leave to filter (None: every node) and the reason upstream gives.

    RunPreFilterPlugins intersects the plugins' PreFilterResults: an empty intersection rejects the pod
    ("node(s) didn't satisfy plugin X" / "plugin(s) [X Y] simultaneously", the returned reason); otherwise
    the nodes left out are never filtered and each counts under "node(s) didn't satisfy plugin(s) [X]".
    """
    allowed: frozenset[str] | None = None
    for names in prefilter_nodes.values():
        allowed = names if allowed is None else allowed & names
    plugins = sorted(prefilter_nodes)
    listed = "[" + " ".join(plugins) + "]"  # Go's %v of a []string
    if allowed is not None and not allowed:
        return allowed, (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1
                         else f"node(s) didn't satisfy plugin(s) {listed} simultaneously")
    return allowed, f"node(s) didn't satisfy plugin(s) {listed}"
