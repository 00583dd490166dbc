"""A Kubernetes scheduler extender backed by kube-scheduler's predicate and priority engine.

Layers, top to bottom (each imports only the ones below it):

- ``extender.api``: HTTP routes and wire models for kube-scheduler's extender protocol.
- ``extender.engine``: the scheduling framework (profiles, plugins, runtime, score mapping).
- ``extender.cluster``: cluster state (compact records, node aggregates, cache, snapshots, dumps).
- ``extender.kube``: Kubernetes semantics on raw objects (quantities, requests, selectors, taints).
"""

__version__ = "0.1.0"
