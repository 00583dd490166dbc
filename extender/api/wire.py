"""Wire models of kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1).

The upstream types carry no json tags, so kube-scheduler writes Go field names, capitalised
(``Pod``, ``NodeNames``, ``FailedNodes``...), and Go decodes keys case-insensitively. We therefore fold
the case of incoming top-level keys onto the Go names before validation, and always emit the Go
names. Pods and Nodes inside stay raw dicts (ordinary camelCase Kubernetes JSON): the engine reads
them into compact records itself, so validating them field by field here would only cost time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

M = TypeVar("M", bound=BaseModel)


class WireError(ValueError):
    """A request body that does not have the protocol's shape; the message names the field."""


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class NodeList(_Wire):
    """A v1.NodeList: only ``items`` matters to the extender."""

    model_config = ConfigDict(extra="allow")
    items: list[dict[str, Any]] | None = Field(default=None, description="v1.Node objects")


class ExtenderArgs(_Wire):
    """Body of filter and prioritize: the pod and either full Nodes or NodeNames."""

    Pod: dict[str, Any] | None = Field(default=None, description="the v1.Pod being scheduled")
    Nodes: NodeList | None = Field(default=None, description="candidate nodes (nodeCacheCapable=false)")
    NodeNames: list[str] | None = Field(default=None, description="candidate node names (nodeCacheCapable=true)")


class ExtenderFilterResult(_Wire):
    """Answer of filter."""

    Nodes: NodeList | None = None
    NodeNames: list[str] | None = None
    FailedNodes: dict[str, str] | None = None
    FailedAndUnresolvableNodes: dict[str, str] | None = None
    Error: str = ""


class HostPriority(_Wire):
    """One element of prioritize's answer; Score is 0..10 (MaxExtenderPriority)."""

    Host: str
    Score: int = Field(ge=0, le=10)


class ExtenderBindingArgs(_Wire):
    """Body of bind."""

    PodName: str = ""
    PodNamespace: str = ""
    PodUID: str = ""
    Node: str = ""


class ExtenderBindingResult(_Wire):
    """Answer of bind; an empty Error means success."""

    Error: str = ""


def fold_keys(body: Any, model: type[BaseModel]) -> dict[str, Any]:
    """Map top-level keys onto the model's Go field names, case-insensitively (later keys win, as in Go)."""
    if not isinstance(body, Mapping):
        raise WireError(f"expected a JSON object for {model.__name__}, got {type(body).__name__}")
    canonical = {name.casefold(): name for name in model.model_fields}
    folded: dict[str, Any] = {}
    for key, val in body.items():
        name = canonical.get(str(key).casefold())
        if name is not None:
            folded[name] = val
    return folded


def decode(body: Any, model: type[M]) -> M:
    """Fold key case and validate; a WireError names the offending field.

    Only the protocol's own (untagged) fields are folded: a NodeList's ``items`` and everything inside
    Pods and Nodes are ordinary json-tagged Kubernetes fields, matched exactly.
    """
    folded = fold_keys(body, model)
    try:
        return model.model_validate(folded)
    except ValidationError as err:
        first = err.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or model.__name__
        raise WireError(f"{location}: {first['msg']}") from err

