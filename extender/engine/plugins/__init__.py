"""The in-tree plugins, one module each, registered by name on import."""

from extender.engine.plugins import (  # noqa: F401
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    taint_toleration,
)
