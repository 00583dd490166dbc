"""Kubernetes API semantics on raw objects: quantities, pod requests, selectors, taints.

Everything here works on plain dicts in the apiserver's camelCase JSON form and mirrors the
pinned upstream release exactly.  Objects are compiled once into small immutable records
(fractions, frozensets, closures) that the scheduling engine evaluates on its hot paths.

Modules:

* :mod:`extender.kube.quantity`: ``resource.Quantity`` parsing and ``Value``/``MilliValue``;
* :mod:`extender.kube.resources`: effective pod requests/limits and non-zero requests;
* :mod:`extender.kube.selectors`: label selectors, node selectors and node affinity;
* :mod:`extender.kube.taints`: taints, tolerations and the untolerated-taint search.
"""

from extender.kube.quantity import QuantityError, decode_quantity, milli_value, parse_quantity, value
from extender.kube.resources import (
    ResourceError,
    non_zero_requests,
    pod_limits,
    pod_requests,
    scheduler_units,
)
from extender.kube.selectors import (
    LabelSelector,
    NodeSelector,
    PreferredTerms,
    RequiredNodeAffinity,
    SelectorError,
    compile_label_selector,
    compile_node_selector,
    compile_preferred_terms,
    compile_required_node_affinity,
)
from extender.kube.taints import Taint, TaintError, Toleration, find_untolerated_taint, tolerates

__all__ = [
    "LabelSelector",
    "NodeSelector",
    "PreferredTerms",
    "QuantityError",
    "RequiredNodeAffinity",
    "ResourceError",
    "SelectorError",
    "Taint",
    "TaintError",
    "Toleration",
    "compile_label_selector",
    "compile_node_selector",
    "compile_preferred_terms",
    "compile_required_node_affinity",
    "decode_quantity",
    "find_untolerated_taint",
    "milli_value",
    "non_zero_requests",
    "parse_quantity",
    "pod_limits",
    "pod_requests",
    "scheduler_units",
    "tolerates",
    "value",
]
