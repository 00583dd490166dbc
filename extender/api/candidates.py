"""Decoding the body of filter and prioritize: the Pod, and the candidate nodes as names or as Nodes.

kube-scheduler sends either ``NodeNames`` (nodeCacheCapable) or a full ``Nodes`` NodeList. The body is
split into its top-level members first (a scan that builds nothing), then each member is decoded as what
it is: the Pod into a dict, the names into a list, and the NodeList only into its items' text, each read
no further than its name and resourceVersion (see extender.engine.sent_nodes). Top-level keys match Go's
field names in any letter case, the last of a key winning, as in Go's decoder; a body whose keys are
ambiguous (two spellings of one field) or that is no JSON object at all goes through the general decoder,
which keeps key order and says what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from extender.api.http import DECODE_CHUNK_BYTES, SPLIT_OBJECT, HTTPProblem, decode_json
from extender.api.wire import AmbiguousKeys, ExtenderArgs, WireError, decode, decode_keeping_key_order, fold_keys
from extender.cluster.columns import NodeNames
from extender.engine.sent_nodes import SentNode
from extender.memo import BoundedMemo


class _NodeListItems(msgspec.Struct):
    items: list[msgspec.Raw] | None = None


_NODE_LIST = msgspec.json.Decoder(_NodeListItems | None)
_NODE_NAMES = msgspec.json.Decoder(list[str] | None)


@dataclass(frozen=True)
class CandidateArgs:
    """filter's and prioritize's body: the pod (a decoded JSON value) and the candidates, as node names or
    as the NodeList's items (None when that member is absent or null)."""

    pod: Any
    names: list[str] | None
    nodes: list[SentNode] | None


def decode_candidate_args(body: bytes, max_names: int) -> CandidateArgs:
    """Decode the body; a NodeNames array of more than ``max_names`` entries is refused (413) before it is
    decoded, since decoding millions of names is itself the stall."""
    try:
        return _decode_candidate_args(body, max_names)
    except UnicodeDecodeError:  # msgspec's, for a string that is not UTF-8: the general decoder says 400
        return _from_decoded(decode_json(body))


def _decode_candidate_args(body: bytes, max_names: int) -> CandidateArgs:
    try:
        members = SPLIT_OBJECT.decode(body)
    except msgspec.DecodeError:
        return _from_decoded(decode_json(body))  # raises: the general decoder names the fault
    except RecursionError:
        raise HTTPProblem(400, "invalid JSON: nested too deeply", "bad_json") from None
    for key, raw in members.items():
        if key.casefold() == "nodenames":
            _check_name_count(memoryview(raw), max_names)
    try:
        fields = fold_keys(members, ExtenderArgs)
    except AmbiguousKeys:
        return _from_decoded(decode_keeping_key_order(body))
    pod = _pod(fields["Pod"]) if "Pod" in fields else None
    if pod is not None and not isinstance(pod, dict):
        raise WireError(f"Pod: expected a Pod object, got {_json_type(pod)}")
    names = _names(fields["NodeNames"]) if "NodeNames" in fields else None
    nodes = _nodes(fields["Nodes"]) if "Nodes" in fields else None
    return CandidateArgs(pod, names, nodes)


def _check_name_count(text: memoryview, max_names: int) -> None:
    if len(text) > DECODE_CHUNK_BYTES:
        entries = bytes(text).count(b",") + 1  # node names hold no comma
        if entries > max_names:
            raise HTTPProblem(413, f"NodeNames: about {entries} nodes exceed the limit of {max_names} "
                                   "per request (--max-request-nodes)", "too_many_nodes")


# The last few NodeNames lists decoded, by their JSON text: kube-scheduler sends the same lists again and again
# (at 5000 nodes, decoding one and checking it names each node once took a tenth of a request). A decoded list
# of names weighs about four times its text.
_RECENT_NAME_LISTS: BoundedMemo[bytes, NodeNames] = BoundedMemo(
    "node name lists", max_bytes=16 * 1024 * 1024, max_entries=8)
_NAMES_WEIGHT = 4


def remember_names(names: NodeNames) -> None:
    """Keep a list of names the service answered with (a filter's passed nodes): kube-scheduler sends it back
    to prioritize as the same text, which then finds it decoded."""
    _RECENT_NAME_LISTS.put(names.text, names, _NAMES_WEIGHT * len(names.text))


# The last few incoming Pods, decoded, by their JSON text: kube-scheduler encodes the same pod object for
# filter and for the prioritize that follows, so prioritize finds it decoded, and the pod's record kept from
# filter is recognised at once (the same object). Never mutated once decoded, like the records made of it. A
# decoded pod weighs about five times its text. Pods of up to _KEPT_POD_BYTES of text are kept (a pod as
# kube-scheduler sends it is a few KB); a larger one is decoded where it lies in the body, neither copied nor
# hashed for a memo that would not keep it.
_RECENT_PODS: BoundedMemo[bytes, dict[str, Any]] = BoundedMemo(
    "incoming pods", max_bytes=8 * 1024 * 1024, max_entries=16)
_POD_WEIGHT = 6
_KEPT_POD_BYTES = 64 * 1024


def _pod(raw: msgspec.Raw) -> Any:
    if len(raw) > _KEPT_POD_BYTES:
        return decode_json(memoryview(raw))
    text = bytes(raw)
    held = _RECENT_PODS.get(text)
    if held is not None:
        return held
    pod = decode_json(text)
    if isinstance(pod, dict):
        _RECENT_PODS.put(text, pod, _POD_WEIGHT * len(text))
    return pod


def _names(raw: msgspec.Raw) -> list[str] | None:
    text = bytes(raw)
    held = _RECENT_NAME_LISTS.get(text)
    if held is not None:
        return held
    try:
        decoded = _NODE_NAMES.decode(text)
        if decoded is None:
            return None
        names = NodeNames(decoded, text)
        _RECENT_NAME_LISTS.put(text, names, _NAMES_WEIGHT * len(text))
        return names
    except msgspec.ValidationError:
        pass  # not a list of strings: find the entry to name it
    names = decode_json(memoryview(raw))  # a 400 naming the fault when it is no JSON (a number past a double)
    if names is None:
        return None
    if not isinstance(names, list):
        raise WireError(f"NodeNames: expected a list of node names, got {_json_type(names)}")
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise WireError(f"NodeNames[{i}]: expected a node name (a string), got {_json_type(name)}")
    return names


def _nodes(raw: msgspec.Raw) -> list[SentNode] | None:
    try:
        node_list = _NODE_LIST.decode(raw)
    except msgspec.ValidationError as err:
        raise WireError(f"Nodes: expected a NodeList: {err}") from None
    if node_list is None:
        return None
    items = node_list.items or []
    for i, item in enumerate(items):
        if bytes(memoryview(item)[:1]) != b"{":
            raise WireError(f"Nodes.items[{i}]: expected a Node object")
    return [SentNode.of_text(item) for item in items]


def _from_decoded(body: Any) -> CandidateArgs:
    """The same result from a body decoded in full (the general path)."""
    args = decode(body, ExtenderArgs)
    nodes = None
    if args.Nodes is not None:
        nodes = [SentNode.of_object(item) for item in args.Nodes.items or []]
    return CandidateArgs(args.Pod, args.NodeNames, nodes)


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
