"""Wire models of kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1).

The upstream types carry no json tags, so kube-scheduler writes Go field names, capitalised
(``Pod``, ``NodeNames``, ``FailedNodes``...), and Go decodes keys case-insensitively. We therefore fold
the case of incoming top-level keys onto the Go names before validation, and always emit the Go
names. Pods and Nodes inside stay raw dicts (ordinary camelCase Kubernetes JSON): the engine reads
them into compact records itself, so validating them field by field here would only cost time.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

M = TypeVar("M", bound=BaseModel)


class WireError(ValueError):
    """A request body that does not have the protocol's shape; the message names the field."""


class AmbiguousKeys(WireError):
    """Two keys of one object fold onto the same field; which one wins depends on their order in the text."""


class KeyOrder(dict[str, Any]):
    """A decoded JSON object that remembers its members in the order of the text, duplicates included."""

    pairs: list[tuple[str, Any]]


def _reject_constant(name: str) -> Any:
    raise WireError(f"invalid JSON: {name} is not a JSON value")


def decode_keeping_key_order(body: bytes) -> Any:
    """Decode JSON keeping each object's members in text order (slower: for bodies with ambiguous keys)."""
    def remember(pairs: list[tuple[str, Any]]) -> KeyOrder:
        obj = KeyOrder(pairs)
        obj.pairs = pairs
        return obj

    try:
        return json.loads(body, object_pairs_hook=remember, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        raise WireError(f"invalid JSON: {err}") from err


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


@functools.cache
def _canonical_names(model: type[BaseModel]) -> dict[str, str]:
    """A wire model's field names by their case-folded form (read on every request: made once per model)."""
    return {name.casefold(): name for name in model.model_fields}


def fold_keys(body: Any, model: type[BaseModel]) -> dict[str, Any]:
    """Map top-level keys onto the model's Go field names, case-insensitively; the last key in the text wins,
    as in Go's decoder.

    A decoded dict keeps one value per exact key (the last) at the place of the first; when keys of different
    case fold onto one field, their order in the text decides, so :class:`AmbiguousKeys` asks the caller to
    decode again with :func:`decode_keeping_key_order`.
    """
    if not isinstance(body, Mapping):
        raise WireError(f"expected a JSON object for {model.__name__}, got {type(body).__name__}")
    canonical = _canonical_names(model)
    folded: dict[str, Any] = {}
    in_order = isinstance(body, KeyOrder)
    source: dict[str, str] = {}
    for key, val in (body.pairs if isinstance(body, KeyOrder) else body.items()):
        name = canonical.get(str(key).casefold())
        if name is None:
            continue
        if not in_order and source.setdefault(name, key) != key:
            raise AmbiguousKeys(f"{key!r} and {source[name]!r} both name {name}")
        folded[name] = val
    return folded


def decode(body: Any, model: type[M]) -> M:
    """Fold key case and validate; a WireError names the offending field.

    Only the protocol's own (untagged) fields are folded: a NodeList's ``items`` and everything inside
    Pods and Nodes are ordinary json-tagged Kubernetes fields, matched exactly.
    """
    return _validate(model, fold_keys(body, model))


def _validate(model: type[M], folded: dict[str, Any]) -> M:
    try:
        return model.model_validate(folded)
    except ValidationError as err:
        first = err.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or model.__name__
        raise WireError(f"{location}: {first['msg']}") from err



class MetaPod(_Wire):
    """A victim named by UID (nodeCacheCapable extenders)."""

    UID: str = ""


class Victims(_Wire):
    """Full victim pods proposed on one node."""

    Pods: list[dict[str, Any]] = Field(default_factory=list)
    NumPDBViolations: int = 0


class MetaVictims(_Wire):
    """Victim UIDs on one node."""

    Pods: list[MetaPod] = Field(default_factory=list)
    NumPDBViolations: int = 0


class ExtenderPreemptionArgs(_Wire):
    """Body of preempt: the preemptor and, per candidate node, the victims (full pods or UIDs)."""

    Pod: dict[str, Any] | None = None
    NodeNameToVictims: dict[str, Victims | None] | None = None
    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None = None


class ExtenderPreemptionResult(_Wire):
    """Answer of preempt: the nodes kept, with their victims by UID."""

    NodeNameToMetaVictims: dict[str, MetaVictims] | None = None


def decode_preemption(body: Any) -> ExtenderPreemptionArgs:
    """Decode preempt's body, folding key case at every level as Go does for these untagged structs."""
    folded = fold_keys(body, ExtenderPreemptionArgs)
    for field_name, model in (("NodeNameToVictims", Victims), ("NodeNameToMetaVictims", MetaVictims)):
        per_node = folded.get(field_name)
        if not isinstance(per_node, Mapping):
            continue
        nodes: dict[str, Any] = {}
        for node, victims in per_node.items():
            if isinstance(victims, Mapping):
                victims = fold_keys(victims, model)
                if model is MetaVictims and isinstance(victims.get("Pods"), list):
                    victims["Pods"] = [fold_keys(p, MetaPod) if isinstance(p, Mapping) else p for p in victims["Pods"]]
            nodes[node] = victims
        folded[field_name] = nodes
    return _validate(ExtenderPreemptionArgs, folded)
