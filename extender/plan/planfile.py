"""The plan file: what to place, on which cluster, under which variants, and what to search for.

A plan is one YAML (or JSON) document; relative paths in it are read from the plan file's folder::

    cluster: ../../config/demo-cluster.yaml   # a dump (default: the bundled demo cluster; --cluster and
                                              # --kubeconfig on the command line win)
    config: scheduler.yaml                    # the extender's configuration (profiles); default: defaults
    profile: default-scheduler                # which of its profiles (default: the first)
    seed: 1                                   # ties among top-scoring nodes are broken by this seed
    kubernetesVersion: "1.36"                 # kube-scheduler release ("1.36", "1.37"; "auto": the cluster's)
    percentageOfNodesToScore: 0               # default: every node is filtered and scored
    zoneLabel: topology.kubernetes.io/zone    # what "a zone" is
    workload:                                 # pods to place, in order
      - file: web.yaml                        # Deployments, StatefulSets, Jobs, ReplicaSets,
        replicas: 300                         #   ReplicationControllers or Pods; replicas overrides theirs
    pools:                                    # node templates
      web: {like: zone-a-07, pricePerHour: 0.19}
    prices:                                   # what the cluster's own nodes cost (first match wins)
      - {matchLabels: {node.kubernetes.io/instance-type: m.small}, perHour: 0.09}
    variants:
      - name: today
      - name: zone b lost
        zonesLost: [zone-b]
      - name: more web nodes
        addNodes: {web: [0, 10, 20]}          # a count, a list of counts or {from, to, step}: one variant each
    search: {pool: web, max: 64}              # the smallest count of the pool that places everything
                                              # (pointsPerRound: 4 counts tried at once per round)

Every error names the file and the key at fault (``plan.yaml: variants[2].addNodes.web: ...``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from extender.cluster.dump import DumpError, load_yaml_file

T = TypeVar("T")

DEFAULT_ZONE_LABEL = "topology.kubernetes.io/zone"
KUBERNETES_VERSIONS = ("1.36", "1.37", "auto")  # what the setting accepts (SPEC: Versions)
MAX_SWEEP_VARIANTS = 100_000
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


class PlanError(ValueError):
    """A plan that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class NodeSelector:
    """Nodes by name or by labels (every ``matchLabels`` pair must match)."""

    names: tuple[str, ...] = ()
    match_labels: tuple[tuple[str, str], ...] = ()

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        """Whether a node is selected."""
        if self.names:
            return name in self.names
        return all(labels.get(key) == value for key, value in self.match_labels)

    def as_yaml(self) -> Any:
        """The plan-file form."""
        return list(self.names) if self.names else {"matchLabels": dict(self.match_labels)}


@dataclass(frozen=True)
class Pool:
    """A node template: copies of an existing node (``like``) or of a Node object, with fresh names."""

    name: str
    like: str = ""
    node: Mapping[str, Any] | None = None
    labels: tuple[tuple[str, str], ...] = ()
    name_prefix: str = ""
    price_per_hour: float | None = None


@dataclass(frozen=True)
class Price:
    """What a node of the base cluster costs per hour, for the nodes a selector matches."""

    selector: NodeSelector
    per_hour: float


@dataclass(frozen=True)
class Variant:
    """One what-if: changes applied to the base cluster and to the scheduler before the workload is placed."""

    name: str
    add_nodes: tuple[tuple[str, int], ...] = ()
    remove_nodes: NodeSelector | None = None
    zones_lost: tuple[str, ...] = ()
    cordon: NodeSelector | None = None
    profile: Mapping[str, Any] | None = None
    weights: tuple[tuple[str, int], ...] = ()
    percentage_of_nodes_to_score: int | None = None
    kubernetes_version: str | None = None
    clusters_lost: tuple[str, ...] = ()  # multi-cluster: member clusters gone
    add_clusters: tuple[tuple[str, int], ...] = ()  # multi-cluster: copies of a member cluster

    def with_nodes(self, pool: str, count: int) -> Variant:
        """This variant with ``count`` more nodes of a pool (the search's step)."""
        added = dict(self.add_nodes)
        added[pool] = added.get(pool, 0) + count
        return replace(self, add_nodes=tuple(added.items()))


@dataclass(frozen=True)
class Search:
    """Find, per variant, the smallest count of one pool that places the whole workload."""

    pool: str
    max: int
    variants: tuple[str, ...] = ()  # empty: every variant
    points_per_round: int = 4


@dataclass(frozen=True)
class WorkloadEntry:
    """Objects to place: a file (or an object written in the plan), with an optional replica count."""

    source: str
    objects: tuple[Mapping[str, Any], ...]
    replicas: int | None = None


@dataclass(frozen=True)
class MultiClusterPlan:
    """Karmada member clusters and ResourceBindings (each with its PropagationPolicy, optional)."""

    clusters: str
    bindings: tuple[tuple[str, str | None], ...]


@dataclass
class Plan:
    """A validated plan; ``variants`` are expanded (one per sweep point)."""

    source: str = "plan"
    cluster: str | None = None
    config: str | None = None
    profile: str | None = None
    seed: int = 0
    kubernetes_version: str | None = None
    percentage_of_nodes_to_score: int | None = None
    zone_label: str = DEFAULT_ZONE_LABEL
    workload: list[WorkloadEntry] = field(default_factory=list)
    pools: dict[str, Pool] = field(default_factory=dict)
    prices: list[Price] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    search: Search | None = None
    multicluster: MultiClusterPlan | None = None


class _Reader:
    """Typed reads of a decoded document that fail with the file and the key path."""

    def __init__(self, source: str, base: Path | None) -> None:
        self.source = source
        self.base = base

    def fail(self, path: str, message: str) -> PlanError:
        return PlanError(f"{self.source}: {path}: {message}")

    def mapping(self, value: Any, path: str, known: Sequence[str] | None = None) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {_type(value)}")
        if known is not None:
            unknown = sorted(str(k) for k in value if k not in known)
            if unknown:
                raise self.fail(path, f"unknown key(s) {unknown}; known keys: {sorted(known)}")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected a non-empty string, got {_type(value)}")
        return value

    def integer(self, value: Any, path: str, low: int = 0, high: int | None = None) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            bound = f"{low}..{high}" if high is not None else f">= {low}"
            raise self.fail(path, f"expected an integer {bound}, got {value!r}")
        return value

    def number(self, value: Any, path: str) -> float:
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise self.fail(path, f"expected a non-negative number, got {value!r}")
        return float(value)

    def items(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {_type(value)}")
        return value

    def path(self, value: Any, path: str) -> str:
        text = self.string(value, path)
        resolved = Path(text).expanduser()
        if not resolved.is_absolute() and self.base is not None:
            resolved = self.base / resolved
        if not resolved.exists():
            raise self.fail(path, f"no such file or directory: {resolved}")
        return str(resolved)

    def labels(self, value: Any, path: str) -> tuple[tuple[str, str], ...]:
        pairs = self.mapping(value, path)
        for key, val in pairs.items():
            if not isinstance(key, str) or not isinstance(val, str):
                raise self.fail(f"{path}.{key}", "labels are strings (quote numbers and booleans)")
        return tuple(sorted(pairs.items()))

    def selector(self, value: Any, path: str) -> NodeSelector:
        if isinstance(value, list):
            names = tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(value))
            if not names:
                raise self.fail(path, "expected at least one node name")
            return NodeSelector(names=names)
        spec = self.mapping(value, path, ("matchLabels",))
        labels = self.labels(spec.get("matchLabels"), f"{path}.matchLabels")
        if not labels:
            raise self.fail(path, "expected a list of node names or {matchLabels: {...}}")
        return NodeSelector(match_labels=labels)

    def version(self, value: Any, path: str) -> str:
        text = str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        text = self.string(text, path)
        match = _VERSION.match(text)
        normalized = f"{match.group(1)}.{match.group(2)}" if match else text
        if normalized not in KUBERNETES_VERSIONS:
            raise self.fail(path, f"expected one of {', '.join(KUBERNETES_VERSIONS)}, got {value!r}")
        return normalized


def _type(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


PLAN_KEYS = ("apiVersion", "kind", "cluster", "config", "profile", "seed", "kubernetesVersion",
             "percentageOfNodesToScore", "zoneLabel", "workload", "pools", "prices", "variants", "search",
             "multicluster")
VARIANT_KEYS = ("name", "addNodes", "removeNodes", "zonesLost", "cordon", "profile", "weights",
                "percentageOfNodesToScore", "kubernetesVersion", "clustersLost", "addClusters")


def parse_plan(data: Any, source: str = "plan", base: Path | None = None,
               read_objects: Callable[[str], list[dict[str, Any]]] | None = None) -> Plan:
    """Validate a decoded plan document (``read_objects`` reads a workload file; default: dump reading)."""
    r = _Reader(source, base)
    doc = r.mapping(data, "plan", PLAN_KEYS)
    if doc.get("kind", "Plan") != "Plan":
        raise r.fail("kind", f"expected Plan, got {doc.get('kind')!r}")
    plan = Plan(source=source)
    plan.cluster = r.path(doc["cluster"], "cluster") if doc.get("cluster") is not None else None
    plan.config = r.path(doc["config"], "config") if doc.get("config") is not None else None
    plan.profile = r.string(doc["profile"], "profile") if doc.get("profile") is not None else None
    plan.seed = r.integer(doc.get("seed", 0), "seed", 0, 2**63 - 1)
    if doc.get("kubernetesVersion") is not None:
        plan.kubernetes_version = r.version(doc["kubernetesVersion"], "kubernetesVersion")
    if doc.get("percentageOfNodesToScore") is not None:
        plan.percentage_of_nodes_to_score = r.integer(doc["percentageOfNodesToScore"], "percentageOfNodesToScore",
                                                      0, 100)
    plan.zone_label = r.string(doc.get("zoneLabel", DEFAULT_ZONE_LABEL), "zoneLabel")
    plan.workload = _workload(r, doc.get("workload"), read_objects or _read_objects)
    plan.pools = _pools(r, doc.get("pools"))
    plan.prices = [_price(r, p, f"prices[{i}]") for i, p in enumerate(r.items(doc.get("prices"), "prices"))]
    plan.variants = _variants(r, doc.get("variants"), plan.pools)
    if doc.get("search") is not None:
        plan.search = _search(r, doc["search"], plan.pools, {v.name for v in plan.variants})
    if doc.get("multicluster") is not None:
        plan.multicluster = _multicluster(r, doc["multicluster"])
    if not plan.workload and plan.multicluster is None:
        raise r.fail("workload", "nothing to place: give workload files (or multicluster bindings)")
    return plan


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    file = Path(path)
    try:
        doc = load_yaml_file(file)
    except DumpError as err:
        raise PlanError(str(err)) from err
    return parse_plan(doc, str(file), file.parent)


def _read_objects(path: str) -> list[dict[str, Any]]:
    from extender.cluster.dump import read_dump_objects

    return read_dump_objects(path)


def _workload(r: _Reader, value: Any, read: Callable[[str], list[dict[str, Any]]]) -> list[WorkloadEntry]:
    entries: list[WorkloadEntry] = []
    for i, item in enumerate(r.items(value, "workload")):
        path = f"workload[{i}]"
        spec = r.mapping(item, path, ("file", "object", "replicas"))
        if ("file" in spec) == ("object" in spec):
            raise r.fail(path, "give either file: PATH or object: {...}")
        replicas = r.integer(spec["replicas"], f"{path}.replicas") if spec.get("replicas") is not None else None
        if "file" in spec:
            file = r.path(spec["file"], f"{path}.file")
            try:
                objects = read(file)
            except DumpError as err:
                raise r.fail(f"{path}.file", str(err)) from err
            source = file
        else:
            objects = [dict(r.mapping(spec["object"], f"{path}.object"))]
            source = f"{path}.object"
        if not objects:
            raise r.fail(path, f"no objects in {source}")
        entries.append(WorkloadEntry(source, tuple(objects), replicas))
    return entries


def _pools(r: _Reader, value: Any) -> dict[str, Pool]:
    pools: dict[str, Pool] = {}
    for name, spec in r.mapping(value, "pools").items():
        path = f"pools.{name}"
        if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
            raise r.fail(path, "a pool's name is a DNS label (lower-case letters, digits and '-')")
        spec = r.mapping(spec, path, ("like", "node", "labels", "namePrefix", "pricePerHour"))
        if ("like" in spec) == ("node" in spec):
            raise r.fail(path, "give either like: <an existing node's name> or node: {a Node object}")
        node = None
        if "node" in spec:
            node = r.mapping(spec["node"], f"{path}.node")
            if node.get("kind", "Node") != "Node":
                raise r.fail(f"{path}.node", f"expected a Node, got {node.get('kind')!r}")
        prefix = r.string(spec.get("namePrefix", f"{name}-"), f"{path}.namePrefix")
        price = r.number(spec["pricePerHour"], f"{path}.pricePerHour") if "pricePerHour" in spec else None
        pools[name] = Pool(name, r.string(spec["like"], f"{path}.like") if "like" in spec else "", node,
                           r.labels(spec.get("labels"), f"{path}.labels"), prefix, price)
    return pools


def _price(r: _Reader, value: Any, path: str) -> Price:
    spec = r.mapping(value, path, ("names", "matchLabels", "perHour"))
    if "perHour" not in spec:
        raise r.fail(path, "perHour is required")
    if "names" in spec:
        selector = r.selector(spec["names"], f"{path}.names")
    else:
        selector = r.selector({"matchLabels": spec.get("matchLabels")}, path)
    return Price(selector, r.number(spec["perHour"], f"{path}.perHour"))


def _counts(r: _Reader, value: Any, path: str) -> list[int]:
    if isinstance(value, list):
        counts = [r.integer(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not counts:
            raise r.fail(path, "expected at least one count")
        return counts
    if isinstance(value, Mapping):
        spec = r.mapping(value, path, ("from", "to", "step"))
        low = r.integer(spec.get("from", 0), f"{path}.from")
        high = r.integer(spec.get("to"), f"{path}.to", low)
        step = r.integer(spec.get("step", 1), f"{path}.step", 1)
        return list(range(low, high + 1, step))
    return [r.integer(value, path)]


def _variants(r: _Reader, value: Any, pools: Mapping[str, Pool]) -> list[Variant]:
    variants: list[Variant] = []
    for i, item in enumerate(r.items(value, "variants")):
        path = f"variants[{i}]"
        spec = r.mapping(item, path, VARIANT_KEYS)
        name = r.string(spec.get("name", f"variant {i}"), f"{path}.name")
        sweeps: list[tuple[str, list[int]]] = []
        for pool, counts in r.mapping(spec.get("addNodes"), f"{path}.addNodes").items():
            if pool not in pools:
                raise r.fail(f"{path}.addNodes.{pool}", f"no pool named {pool!r}; pools: {sorted(pools)}")
            sweeps.append((str(pool), _counts(r, counts, f"{path}.addNodes.{pool}")))
        common: dict[str, Any] = {
            "remove_nodes": r.selector(spec["removeNodes"], f"{path}.removeNodes") if spec.get("removeNodes") else None,
            "zones_lost": tuple(r.string(z, f"{path}.zonesLost[{j}]")
                                for j, z in enumerate(r.items(spec.get("zonesLost"), f"{path}.zonesLost"))),
            "cordon": r.selector(spec["cordon"], f"{path}.cordon") if spec.get("cordon") else None,
            "profile": dict(r.mapping(spec["profile"], f"{path}.profile")) if spec.get("profile") else None,
            "weights": tuple((str(k), r.integer(w, f"{path}.weights.{k}", 0, 2**31 - 1))
                             for k, w in r.mapping(spec.get("weights"), f"{path}.weights").items()),
            "percentage_of_nodes_to_score": (
                r.integer(spec["percentageOfNodesToScore"], f"{path}.percentageOfNodesToScore", 0, 100)
                if spec.get("percentageOfNodesToScore") is not None else None),
            "kubernetes_version": (r.version(spec["kubernetesVersion"], f"{path}.kubernetesVersion")
                                   if spec.get("kubernetesVersion") is not None else None),
            "clusters_lost": tuple(r.string(c, f"{path}.clustersLost[{j}]")
                                   for j, c in enumerate(r.items(spec.get("clustersLost"), f"{path}.clustersLost"))),
            "add_clusters": tuple((str(k), r.integer(n, f"{path}.addClusters.{k}"))
                                  for k, n in r.mapping(spec.get("addClusters"), f"{path}.addClusters").items()),
        }
        points = list(itertools.product(*(counts for _, counts in sweeps)))
        if len(variants) + len(points) > MAX_SWEEP_VARIANTS:
            raise r.fail(f"{path}.addNodes", f"more than {MAX_SWEEP_VARIANTS:,} variants")
        swept = any(len(counts) > 1 for _, counts in sweeps)
        for point in points:
            added = tuple((pool, n) for (pool, _), n in zip(sweeps, point, strict=True))
            label = name if not swept else f"{name} ({', '.join(f'{pool} +{n}' for pool, n in added)})"
            variants.append(Variant(label, added, **common))
    if not variants:
        variants.append(Variant("baseline"))
    seen: set[str] = set()
    for variant in variants:
        if variant.name in seen:
            raise r.fail("variants", f"two variants are named {variant.name!r}")
        seen.add(variant.name)
    return variants


def _search(r: _Reader, value: Any, pools: Mapping[str, Pool], names: set[str]) -> Search:
    spec = r.mapping(value, "search", ("pool", "max", "variants", "pointsPerRound"))
    pool = r.string(spec.get("pool"), "search.pool")
    if pool not in pools:
        raise r.fail("search.pool", f"no pool named {pool!r}; pools: {sorted(pools)}")
    chosen = tuple(r.string(v, f"search.variants[{i}]") for i, v in enumerate(r.items(spec.get("variants"),
                                                                                   "search.variants")))
    for name in chosen:
        if name not in names:
            raise r.fail("search.variants", f"no variant named {name!r}")
    return Search(pool, r.integer(spec.get("max", 100), "search.max", 1, 100_000), chosen,
                  r.integer(spec.get("pointsPerRound", 4), "search.pointsPerRound", 1, 1000))


def _multicluster(r: _Reader, value: Any) -> MultiClusterPlan:
    spec = r.mapping(value, "multicluster", ("clusters", "bindings"))
    clusters = r.path(spec.get("clusters"), "multicluster.clusters")
    bindings = []
    for i, item in enumerate(r.items(spec.get("bindings"), "multicluster.bindings")):
        entry = r.mapping(item, f"multicluster.bindings[{i}]", ("binding", "policy"))
        policy = r.path(entry["policy"], f"multicluster.bindings[{i}].policy") if entry.get("policy") else None
        bindings.append((r.path(entry.get("binding"), f"multicluster.bindings[{i}].binding"), policy))
    if not bindings:
        raise r.fail("multicluster.bindings", "expected at least one {binding: FILE, policy: FILE}")
    return MultiClusterPlan(clusters, tuple(bindings))
