"""The base cluster of a plan: its objects in the order they were read, shipped once to every worker.

It comes from a dump (any ``kubectl get -o yaml|json`` output, or the bundled demo cluster) or from a live
cluster listed once (``--kubeconfig``, read-only: the lists of ``cluster/oneshot.py``, recorded as they are
applied). Workers rebuild a :class:`ClusterCache` from it once per kube-scheduler release a variant follows
and copy that cache for every variant. The base keeps the cluster's version (the apiserver's ``/version``, or
the one the dump records), which ``kubernetesVersion: auto`` follows.

Pickling: the objects travel as one zlib-compressed JSON document (``orjson``, level 1), which is several
times smaller than pickle's object graph and faster to write and read (see bench/PLAN-RESULTS.md); pods are
decoded back straight into the cache's slim form.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from extender.cluster.cache import ClusterCache
from extender.cluster.dra_objects import DRAObjectError
from extender.cluster.dump import DumpError, RecordedVersion, read_dump
from extender.cluster.keys import object_key
from extender.cluster.records import RecordError, slim_pod
from extender.kube.release import Release, Source, VersionChoice, choose, release
from extender.kubeapi.podcodec import decode_pod

_COMPRESSION_LEVEL = 1  # most of zlib's reduction on JSON, at a fraction of the higher levels' time


class _Items(msgspec.Struct):
    items: list[msgspec.Raw]


class _Kind(msgspec.Struct):
    kind: str = ""


_items = msgspec.json.Decoder(_Items)
_kind = msgspec.json.Decoder(_Kind)


@dataclass(frozen=True, eq=False)
class BaseCluster:
    """The base cluster's objects (nodes, pods as the cache keeps them, the other kinds) and where they came from."""

    objects: tuple[Mapping[str, Any], ...]
    source: str
    version: RecordedVersion | None = None  # the cluster's version, when the dump records it or the apiserver said
    version_source: Source = "dump"  # where ``version`` came from: "dump" or "apiserver"

    def __reduce__(self) -> tuple[Any, tuple[bytes, str, RecordedVersion | None, Source]]:
        return (_unpack, (self.pack(), self.source, self.version, self.version_source))

    def version_choice(self, setting: int | None) -> VersionChoice:
        """The release to follow for a kubernetesVersion setting (None: auto, the cluster's version when known,
        else the newest supported release)."""
        return _choice(setting, self.version, self.version_source)

    def pack(self) -> bytes:
        """The objects as compressed JSON (what a pickle of this object holds)."""
        return zlib.compress(orjson.dumps({"items": self.objects}), _COMPRESSION_LEVEL)

    def cache(self, release: Release | None = None) -> ClusterCache:
        """A fresh cache holding the objects, following ``release`` (default: the newest supported one); assumed
        pods never expire in it (nothing will confirm them)."""
        cache = ClusterCache(assumed_ttl_seconds=0, release=release)
        for obj in self.objects:
            try:
                cache.apply(obj)
            except (RecordError, DRAObjectError, ValueError) as err:
                kind = str(obj.get("kind"))
                raise DumpError(f"{self.source}: {kind} {object_key(obj, kind)!r}: {err}") from err
        return cache

    def nodes(self) -> dict[str, Mapping[str, Any]]:
        """The Node objects by name."""
        return {str((o.get("metadata") or {}).get("name")): o for o in self.objects if o.get("kind") == "Node"}


def _choice(setting: int | None, version: RecordedVersion | None, source: Source) -> VersionChoice:
    if version is None:
        return choose(setting)
    return choose(setting, version.git_version, source=source, reported_minor_field=version.minor)


def _unpack(packed: bytes, source: str, version: RecordedVersion | None, version_source: Source) -> BaseCluster:
    items = _items.decode(zlib.decompress(packed)).items
    objects: list[Mapping[str, Any]] = []
    for raw in items:
        objects.append(decode_pod(raw) if _kind.decode(raw).kind == "Pod" else orjson.loads(memoryview(raw)))
    return BaseCluster(tuple(objects), source, version, version_source)


def base_from_dump(path: str) -> BaseCluster:
    """The supported objects of a dump file or directory, in file order."""
    contents = read_dump(path)
    # Pods in the cache's slim form from the start: what workers decode them back into, and smaller.
    base = BaseCluster(tuple(slim_pod(o) if o.get("kind") == "Pod" else o for o in contents.objects), path,
                       contents.version)
    base.cache()  # a bad object is reported now, naming it, rather than in every worker
    return base


class _RecordingCache(ClusterCache):
    """A cache that also keeps, in order, every object a list applied to it (the client gives list items their kind)."""

    def __init__(self) -> None:
        super().__init__(assumed_ttl_seconds=0)
        self.recorded: list[Mapping[str, Any]] = []

    def apply_many(self, kind: str, objects: Iterable[Mapping[str, Any]],
                   seen: set[str]) -> list[tuple[Mapping[str, Any], Exception]]:
        batch = list(objects)
        failures = super().apply_many(kind, batch, seen)
        failed = {id(raw) for raw, _ in failures}
        self.recorded.extend(slim_pod(raw) if kind == "Pod" else raw for raw in batch if id(raw) not in failed)
        return failures


def base_from_live(cluster: Any, client: Any = None) -> BaseCluster:
    """Every kind the live source watches, listed once from the apiserver (nothing written); ``client``, a
    KubeClient to use instead of one made from ``cluster``.

    The apiserver's ``/version`` is read first and kept; the kinds listed, and the API version of each, are
    those of the release it reports (kubernetesVersion auto). Raises
    :class:`extender.cluster.oneshot.ClusterReadError` when the cluster cannot be read.
    """
    from extender.cluster.live import watched_kinds
    from extender.cluster.oneshot import read_cluster

    recorder = _RecordingCache()
    reported: list[RecordedVersion] = []

    def kinds_for(answer: dict[str, Any]) -> tuple[str, ...]:
        version = RecordedVersion(str(answer.get("gitVersion") or ""), str(answer.get("minor") or ""), "/version")
        reported.append(version)
        choice = _choice(None, version, "apiserver")
        recorder.follow(release(choice.minor, None, choice))
        return watched_kinds(recorder.release)

    read_cluster(cluster, recorder, client=client, kinds_for_version=kinds_for)
    return BaseCluster(tuple(recorder.recorded), str(getattr(cluster, "server", "the live cluster")),
                       reported[0] if reported else None, "apiserver")
