"""Reading cluster dumps: any ``kubectl get ... -o yaml|json`` output, as a file or a directory of files.

Accepts a single object, a ``List`` (or typed list such as ``NodeList`` whose items carry no kind), and
multi-document YAML. Objects of kinds the scheduler does not read are counted and skipped, so a full
``kubectl get all -A -o yaml`` loads without edits.

**The cluster's version.** A dump records the Kubernetes version of its cluster with the apiserver's own
answer: a document that is the output of ``kubectl get --raw /version`` (``{"major", "minor", "gitVersion",
...}``, no kind) or of ``kubectl version -o json|yaml`` (its ``serverVersion``), e.g. a ``version.json``
beside the other files of a dump directory. With ``kubernetesVersion: auto`` the engine then follows that
release (see :mod:`extender.kube.release`); a dump without one is taken as the newest supported release.
Two documents recording different versions are an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import orjson
import yaml

from extender.cluster.cache import OBJECT_KINDS, ClusterCache
from extender.cluster.dra_objects import DRA_KINDS, DRAObjectError
from extender.cluster.keys import object_key
from extender.cluster.records import RecordError
from extender.kubeapi.podcodec import decode_pod

SUPPORTED_KINDS = frozenset({"Node", "Pod", *OBJECT_KINDS, *DRA_KINDS})
_SUFFIXES = (".yaml", ".yml", ".json")

try:  # libyaml is several times faster on large dumps
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


class DumpError(ValueError):
    """A dump that cannot be read; the message names the file and the problem."""


# YAML aliases let a few bytes stand for an exponential tree ("billion laughs"); kubectl never writes them,
# hand-written files use a few. Past this many nodes reached through aliases, a file is refused.
MAX_ALIAS_EXPANSION = 1_000_000


class _RecursiveYAML(ValueError):
    """A node reached again through an alias inside itself: its expansion would never end."""


def _expanded_size(root: yaml.Node) -> tuple[int, int]:
    """(distinct nodes, nodes counting every alias as a full copy) of a composed YAML document.

    Depth first: everything pushed after a node's "children done" marker is its descendant, so meeting a
    node again while it is still open is a cycle (``&a [*a]``), refused rather than followed forever.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done and id(node) in open_nodes:
            raise _RecursiveYAML
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            sizes[id(node)] = 1
            continue
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_ALIAS_EXPANSION + len(sizes):
                break  # already too large: no need to finish counting
        else:
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return len(sizes), sizes.get(id(root), MAX_ALIAS_EXPANSION + len(sizes) + 1)


def load_yaml_documents(data: bytes | str, source: str) -> list[Any]:
    """Every document of a YAML text (safe types only), refusing alias bombs with a clear error."""
    loader = _Loader(data)
    docs: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            distinct, expanded = _expanded_size(node)
            if expanded - distinct > MAX_ALIAS_EXPANSION:
                raise DumpError(f"{source}: YAML aliases expand to more than {MAX_ALIAS_EXPANSION:,} extra nodes: "
                                "refused (write the objects out, as kubectl does)")
            docs.append(loader.construct_document(node))
    except _RecursiveYAML:
        raise DumpError(f"{source}: a YAML alias refers to a node that contains it (a recursive document): "
                        "refused") from None
    except yaml.YAMLError as err:
        raise DumpError(f"{source}: invalid YAML: {err}") from err
    finally:
        loader.dispose()
    return docs


#: The kind given to a version document read from a dump (it has none of its own).
VERSION_KIND = "ServerVersion"


@dataclass(frozen=True)
class RecordedVersion:
    """The cluster version a dump records: the apiserver's gitVersion and minor fields."""

    git_version: str
    minor: str = ""
    source: str = ""


def load_yaml_file(path: Path) -> Any:
    """The one YAML (or JSON) document of a file, None for an empty file; DumpError naming the file when it
    cannot be read, is not YAML or holds several documents."""
    try:
        text = path.read_bytes()
    except OSError as err:
        raise DumpError(f"{path}: {err.strerror or err}") from err
    docs = load_yaml_documents(text, str(path))
    if len(docs) > 1:
        raise DumpError(f"{path}: expected one YAML document, found {len(docs)}")
    return docs[0] if docs else None


@dataclass
class DumpContents:
    """The objects of a dump by kind, what was skipped, and the cluster version it records (if any)."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    version: RecordedVersion | None = None


def _version_document(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """A /version answer (or ``kubectl version`` output's serverVersion) as a VERSION_KIND object."""
    server = doc.get("serverVersion") if "serverVersion" in doc else doc
    if isinstance(server, Mapping) and isinstance(server.get("gitVersion"), str) and "minor" in server:
        return {"kind": VERSION_KIND, "gitVersion": server["gitVersion"], "minor": str(server.get("minor") or "")}
    return None


def _flatten(doc: Any, source: str) -> Iterator[dict[str, Any]]:
    if doc is None:
        return
    if not isinstance(doc, Mapping):
        raise DumpError(f"{source}: expected Kubernetes objects, found a {type(doc).__name__}")
    kind = doc.get("kind")
    if not kind:
        version = _version_document(doc)
        if version is not None:
            yield version
            return
    items = doc.get("items")
    if isinstance(items, list) and (kind == "List" or (isinstance(kind, str) and kind.endswith("List"))):
        item_kind = kind[:-4] if kind != "List" else None
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise DumpError(f"{source}: items[{i}] is not an object")
            obj = dict(item)
            if not obj.get("kind"):
                if not item_kind:
                    raise DumpError(f"{source}: items[{i}] has no kind")
                obj["kind"] = item_kind
            yield obj
        return
    if not kind:
        raise DumpError(f"{source}: an object without a kind")
    yield dict(doc)


class _RawList(msgspec.Struct):
    kind: Any = None
    items: list[msgspec.Raw] | None = None


class _Kind(msgspec.Struct):
    kind: Any = None


_raw_list = msgspec.json.Decoder(_RawList)
_kind_of = msgspec.json.Decoder(_Kind)


def _json_list_items(data: bytes, source: str) -> Iterator[dict[str, Any]] | None:
    """The items of a JSON ``List`` decoded one at a time (pods straight into what the cache keeps), or None
    when the document is something else. A 150k-pod dump then never exists as one decoded tree."""
    try:
        doc = _raw_list.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if doc.kind != "List" or doc.items is None:
        return None
    items = doc.items

    def generate() -> Iterator[dict[str, Any]]:
        for i, raw in enumerate(items):
            try:
                kind = _kind_of.decode(raw).kind
            except msgspec.ValidationError:
                raise DumpError(f"{source}: items[{i}] is not an object") from None
            if not kind:
                raise DumpError(f"{source}: items[{i}] has no kind")
            yield decode_pod(raw) if kind == "Pod" else orjson.loads(memoryview(raw))

    return generate()


def read_documents(path: Path) -> Iterator[dict[str, Any]]:
    """Every object in one file (JSON or single/multi-document YAML)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DumpError(f"{path}: {err.strerror or err}") from err
    stripped = data.lstrip()
    if stripped.startswith(b"{"):
        items = _json_list_items(data, str(path))
        if items is not None:
            yield from items
            return
    if stripped.startswith((b"{", b"[")):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            raise DumpError(f"{path}: invalid JSON: {err}") from err
        docs = doc if isinstance(doc, list) else [doc]
    else:
        docs = load_yaml_documents(data, str(path))
    for doc in docs:
        yield from _flatten(doc, str(path))


def read_text_objects(text: str | bytes, source: str) -> list[dict[str, Any]]:
    """Every object of a YAML or JSON text (one or more documents, Lists flattened), as a file's are read."""
    return [obj for doc in load_yaml_documents(text, source) for obj in _flatten(doc, source)]


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
        if not files:
            raise DumpError(f"{path}: no .yaml, .yml or .json files in this directory")
        return files
    if not path.exists():
        raise DumpError(f"{path}: no such file or directory")
    return [path]


def read_dump_objects(path: str | Path) -> list[dict[str, Any]]:
    """Every object of a dump file or directory, whatever its kind, in file order."""
    return [obj for file in _files(Path(path)) for obj in read_documents(file)]


def read_dump(path: str | Path) -> DumpContents:
    """Read a dump file or directory; objects of unsupported kinds are counted in ``skipped``."""
    contents = DumpContents()
    for file in _files(Path(path)):
        for obj in read_documents(file):
            kind = str(obj.get("kind"))
            if kind in SUPPORTED_KINDS:
                contents.objects.append(obj)
            elif kind == VERSION_KIND:
                recorded = RecordedVersion(obj["gitVersion"], obj["minor"], str(file))
                held = contents.version
                if held is not None and (held.git_version, held.minor) != (recorded.git_version, recorded.minor):
                    raise DumpError(f"{path}: records two cluster versions, {held.git_version} ({held.source}) "
                                    f"and {recorded.git_version} ({recorded.source})")
                contents.version = recorded
            else:
                contents.skipped[kind] = contents.skipped.get(kind, 0) + 1
    return contents


def load_cache(path: str | Path, cache: ClusterCache | None = None) -> tuple[ClusterCache, DumpContents]:
    """A cache filled from a dump; a bad object raises DumpError naming it and the field."""
    cache = cache if cache is not None else ClusterCache()
    contents = read_dump(path)
    fill_cache(path, contents, cache)
    return cache, contents


def fill_cache(path: str | Path, contents: DumpContents, cache: ClusterCache) -> None:
    """Put a dump's objects (read by :func:`read_dump`) into a cache; a bad object raises DumpError naming it."""
    for obj in contents.objects:
        try:
            cache.apply(obj)
        except (RecordError, DRAObjectError) as err:
            kind = obj.get("kind")
            raise DumpError(f"{path}: {kind} {object_key(obj, str(kind))!r}: {err}") from err
