"""Reading Karmada objects from files: Clusters, PropagationPolicies and ResourceBindings.

Any ``kubectl get ... -o yaml|json`` output works (a single object, a ``List`` or typed list, multi-document
YAML), as a file or a directory of ``.yaml``/``.yml``/``.json`` files (read in name order); documents are
read by :func:`extender.cluster.dump.read_documents`.  Objects of other kinds are skipped, so a whole
``karmadactl get`` dump loads.  Errors name the file, the object and the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from extender.cluster.dump import DumpError, read_documents
from extender.multicluster.model import (
    Cluster,
    ModelError,
    Placement,
    ResourceBinding,
    parse_binding,
    parse_cluster,
    parse_placement_source,
)

__all__ = ["DumpError", "load_binding", "load_clusters", "load_placement"]

_SUFFIXES: Final = (".yaml", ".yml", ".json")


def _objects(path: str | Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    root = Path(path)
    if root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
        if not files:
            raise DumpError(f"{root}: no .yaml, .yml or .json files in this directory")
    elif root.exists():
        files = [root]
    else:
        raise DumpError(f"{root}: no such file or directory")
    for file in files:
        for obj in read_documents(file):
            yield file, obj


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, dict) else ""


def load_clusters(path: str | Path) -> list[Cluster]:
    """Every ``Cluster`` in a file or directory; duplicate names are an error.

    An empty list (what ``karmadactl get clusters -o yaml`` prints for an empty fleet) is an empty
    fleet; objects none of which is a Cluster mean the wrong file was given.
    """
    clusters: dict[str, Cluster] = {}
    others = 0
    for file, obj in _objects(path):
        if obj.get("kind") != "Cluster":
            others += 1
            continue
        try:
            cluster = parse_cluster(obj)
        except ModelError as err:
            raise DumpError(f"{file}: {err}") from err
        if cluster.name in clusters:
            raise DumpError(f"{file}: Cluster {cluster.name!r} appears twice")
        clusters[cluster.name] = cluster
    if not clusters and others:
        raise DumpError(f"{path}: no Cluster objects found ({others} other object(s))")
    return list(clusters.values())


def _single(path: str | Path, kinds: frozenset[str], what: str) -> tuple[Path, dict[str, Any]]:
    found = [(file, obj) for file, obj in _objects(path) if obj.get("kind") in kinds]
    if len(found) != 1:
        names = ", ".join(f"{o.get('kind')} {_name(o)!r}" for _f, o in found) or "none"
        raise DumpError(f"{path}: expected exactly one {what}, found {len(found)} ({names})")
    return found[0]


def load_binding(path: str | Path) -> ResourceBinding:
    """The single (Cluster)ResourceBinding of a file or directory."""
    file, obj = _single(path, frozenset({"ResourceBinding", "ClusterResourceBinding"}), "ResourceBinding")
    try:
        return parse_binding(obj)
    except ModelError as err:
        raise DumpError(f"{file}: ResourceBinding {_name(obj)!r}: {err}") from err


def load_placement(path: str | Path) -> Placement:
    """The placement of the single (Cluster)PropagationPolicy of a file or directory."""
    file, obj = _single(path, frozenset({"PropagationPolicy", "ClusterPropagationPolicy"}), "PropagationPolicy")
    try:
        return parse_placement_source(obj)
    except ModelError as err:
        raise DumpError(f"{file}: {obj.get('kind')} {_name(obj)!r}: {err}") from err
