"""An example user plugin: prefer nodes carrying a label, and optionally require it.

Enable it from a configuration file (see config/with-user-plugin.yaml)::

    imports: [../examples/plugins/prefer_label.py]     # a path relative to the config file, or a module
    profiles:
      - schedulerName: default-scheduler
        plugins:
          multiPoint:
            enabled: [{name: PreferLabel, weight: 5}]
        pluginConfig:
          - name: PreferLabel
            args: {key: disktype, value: ssd, required: false}

A plugin is an ordinary class: subclass FilterPlugin and/or ScorePlugin, give it a ``name``, implement
the extension points it needs, and ``@register`` it. Scores are 0..100 like upstream's plugins.
"""

from __future__ import annotations

from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import MAX_NODE_SCORE, CycleState, FilterPlugin, ScorePlugin, Status, unresolvable
from extender.engine.profile import ProfileError
from extender.engine.registry import register


@register
class PreferLabel(FilterPlugin, ScorePlugin):
    """Scores 100 on nodes whose label ``key`` equals ``value``, else 0; rejects them if ``required``."""

    name = "PreferLabel"
    node_local = True  # the verdict and score depend only on the node's labels: cacheable

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.key = self.args.get("key")
        self.value = self.args.get("value")
        if not isinstance(self.key, str) or not isinstance(self.value, str):
            raise ProfileError("PreferLabel args: key and value must be strings")
        self.required = bool(self.args.get("required", False))

    def _matches(self, node: NodeInfo) -> bool:
        return node.node is not None and node.node.labels.get(self.key) == self.value

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        if self.required and not self._matches(node):
            return unresolvable(f"node(s) didn't have label {self.key}={self.value}")
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        return MAX_NODE_SCORE if self._matches(node) else 0
