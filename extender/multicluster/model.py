"""Karmada objects as records: ``Cluster``, ``Placement`` (of a PropagationPolicy) and ``ResourceBinding``.

Upstream shapes (karmada-io/karmada):

* ``pkg/apis/cluster/v1alpha1/types.go``: ``spec.{provider,region,zone,zones,taints,resourceModels}``,
  ``status.{apiEnablements,resourceSummary{allocatable,allocating,allocated,allocatableModelings}}``;
* ``pkg/apis/policy/v1alpha1/propagation_types.go``: ``placement.{clusterAffinity, clusterAffinities
  [{affinityName, ..., overflowAffinities}], clusterTolerations, spreadConstraints, replicaScheduling}``
  (the JSON key of the excluded clusters is ``exclude``);
* ``pkg/apis/work/v1alpha2/binding_types.go``: ``spec.{resource, replicaRequirements, replicas, clusters,
  placement, gracefulEvictionTasks, rescheduleTriggeredAt}`` and ``status.{schedulerObservingAffinityName,
  lastScheduledTime}``.

Parsing is strict about types and names the offending field (``spec.replicas: expected an integer, got
str``), and applies the defaults karmada-webhook would have applied before the scheduler sees a policy
(``pkg/webhook/propagationpolicy/mutating.go``, ``pkg/util/helper/policy.go``): replicaSchedulingType
``Divided`` (the CRD default), division preference ``Weighted`` for Divided, and spread constraints by
``cluster`` with ``minGroups`` 1.  Since v1.15 the webhook adds no not-ready/unreachable tolerations: a
policy tolerates those taints only when it says so.  The webhook's validation
(``pkg/util/validation/validation.go``) is applied too, with upstream's messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from extender.kube.quantity import QuantityError, decode_quantity
from extender.kube.selectors import (
    LabelSelector,
    NodeSelector,
    SelectorError,
    compile_label_selector,
    compile_node_selector,
)
from extender.kube.taints import Taint, TaintError, Toleration, parse_taints, parse_tolerations
from extender.multicluster.goquantity import GoQuantity, parse_go_quantity

__all__ = [
    "AGGREGATED",
    "DIVIDED",
    "DUPLICATED",
    "WEIGHTED",
    "APIEnablements",
    "AllocatableModeling",
    "Cluster",
    "ClusterAffinity",
    "ClusterAffinityTerm",
    "FieldRequirement",
    "GracefulEvictionTask",
    "ModelError",
    "ObjectReference",
    "Placement",
    "ReplicaScheduling",
    "ResourceBinding",
    "ResourceModel",
    "ResourceModelRange",
    "ResourceSummary",
    "SpreadConstraint",
    "StaticClusterWeight",
    "TargetCluster",
    "parse_binding",
    "parse_cluster",
    "parse_placement",
    "parse_placement_source",
]

DUPLICATED: Final = "Duplicated"
DIVIDED: Final = "Divided"
AGGREGATED: Final = "Aggregated"
WEIGHTED: Final = "Weighted"
DYNAMIC_WEIGHT_AVAILABLE_REPLICAS: Final = "AvailableReplicas"

SPREAD_BY_CLUSTER: Final = "cluster"
SPREAD_BY_REGION: Final = "region"
SPREAD_BY_ZONE: Final = "zone"
SPREAD_BY_PROVIDER: Final = "provider"
SPREAD_FIELDS: Final = (SPREAD_BY_CLUSTER, SPREAD_BY_REGION, SPREAD_BY_ZONE, SPREAD_BY_PROVIDER)

#: ``pkg/util/constants.go``: the keys a placement ``fieldSelector`` may use.
PROVIDER_FIELD: Final = "provider"
REGION_FIELD: Final = "region"
ZONE_FIELD: Final = "zone"

#: Taints the cluster controller sets on unhealthy clusters (``pkg/apis/cluster/v1alpha1/well_known_constants.go``).
TAINT_CLUSTER_NOT_READY: Final = "cluster.karmada.io/not-ready"
TAINT_CLUSTER_UNREACHABLE: Final = "cluster.karmada.io/unreachable"

INT32_MAX: Final = 2**31 - 1
INT64_MAX: Final = 2**63 - 1

_POLICY_KINDS: Final = frozenset({"PropagationPolicy", "ClusterPropagationPolicy"})
_BINDING_KINDS: Final = frozenset({"ResourceBinding", "ClusterResourceBinding"})


class ModelError(ValueError):
    """A Karmada object that cannot be read; the message names the field and what is wrong."""


# --------------------------------------------------------------------------- raw helpers


def _type_name(obj: object) -> str:
    return "null" if obj is None else type(obj).__name__


def _map(obj: object, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise ModelError(f"{path}: expected an object, got {_type_name(obj)}")
    return obj


def _list(obj: object, path: str) -> Sequence[Any]:
    if obj is None:
        return ()
    if isinstance(obj, (str, bytes)) or not isinstance(obj, Sequence):
        raise ModelError(f"{path}: expected a list, got {_type_name(obj)}")
    return obj


def _str(obj: object, path: str) -> str:
    if obj is None:
        return ""
    if not isinstance(obj, str):
        raise ModelError(f"{path}: expected a string, got {_type_name(obj)}")
    return obj


def _kind(root: Mapping[str, Any], prefix: str) -> str | None:
    """An object's ``kind``: None when absent, else a string (anything else is refused by name)."""
    kind = root.get("kind")
    return None if kind is None else _str(kind, f"{prefix}kind")


def _int(obj: object, path: str, *, low: int = -(2**31), high: int = INT32_MAX) -> int:
    if obj is None:
        return 0
    if isinstance(obj, bool) or not isinstance(obj, int):
        raise ModelError(f"{path}: expected an integer, got {_type_name(obj)}")
    if not low <= obj <= high:
        raise ModelError(f"{path}: {obj} is out of range [{low}, {high}]")
    return obj


def _str_list(obj: object, path: str) -> tuple[str, ...]:
    return tuple(_str(item, f"{path}[{i}]") for i, item in enumerate(_list(obj, path)))


def _quantity(obj: object, path: str) -> GoQuantity:
    """A quantity, checked like the API server would, kept in the form Go's ``resource.Quantity`` has."""
    try:
        decode_quantity(obj)
    except QuantityError as err:
        raise ModelError(f"{path}: {err}") from err
    return parse_go_quantity(obj)


def _quantities(obj: object, path: str) -> dict[str, GoQuantity] | None:
    """A ``ResourceList``; ``None`` when the field is absent (Go's nil map)."""
    if obj is None:
        return None
    raw = _map(obj, path)
    return {str(name): _quantity(quantity, f"{path}.{name}") for name, quantity in raw.items()}


def _time(obj: object, path: str) -> datetime | None:
    """A ``metav1.Time`` (RFC 3339); ``None`` when absent."""
    if obj is None or obj == "":
        return None
    if isinstance(obj, datetime):  # YAML loaders turn unquoted timestamps into datetimes
        return obj if obj.tzinfo is not None else obj.replace(tzinfo=UTC)
    text = _str(obj, path)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as err:
        raise ModelError(f"{path}: {text!r} is not an RFC 3339 time") from err
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# --------------------------------------------------------------------------- Cluster


@dataclass(frozen=True, slots=True)
class ResourceModelRange:
    """One resource's ``[min, max)`` in a cluster resource model grade."""

    name: str
    min: GoQuantity
    max: GoQuantity


@dataclass(frozen=True, slots=True)
class ResourceModel:
    """A grade of ``spec.resourceModels``."""

    grade: int
    ranges: tuple[ResourceModelRange, ...]


@dataclass(frozen=True, slots=True)
class AllocatableModeling:
    """``status.resourceSummary.allocatableModelings[i]``: how many nodes fit grade ``grade``."""

    grade: int
    count: int


@dataclass(frozen=True, slots=True)
class ResourceSummary:
    """``status.resourceSummary``; a ``None`` list stands for an absent (nil) ResourceList."""

    allocatable: dict[str, GoQuantity] | None
    allocating: dict[str, GoQuantity] | None
    allocated: dict[str, GoQuantity] | None
    allocatable_modelings: tuple[AllocatableModeling, ...] = ()


#: ``status.apiEnablements`` as group-version -> kinds served.
APIEnablements = Mapping[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class Cluster:
    """A member cluster, read once from its ``Cluster`` object."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    provider: str = ""
    region: str = ""
    #: ``spec.zone``, deprecated upstream but still what a region's zone set is built from.
    zone: str = ""
    zones: tuple[str, ...] = ()
    taints: tuple[Taint, ...] = ()
    resource_models: tuple[ResourceModel, ...] = ()
    api_enablements: APIEnablements = field(default_factory=dict)
    resource_summary: ResourceSummary | None = None
    deleting: bool = False

    def serves(self, api_version: str, kind: str) -> bool:
        """Upstream ``helper.IsAPIEnabled``: the cluster lists ``kind`` under ``api_version``."""
        return kind in self.api_enablements.get(api_version, frozenset())


def parse_cluster(obj: Mapping[str, Any], *, path: str = "") -> Cluster:
    """Build a :class:`Cluster` from a ``cluster.karmada.io/v1alpha1`` Cluster object."""
    root = _map(obj, path or "Cluster")
    prefix = f"{path}." if path else ""
    meta = _map(root.get("metadata"), f"{prefix}metadata")
    name = _str(meta.get("name"), f"{prefix}metadata.name")
    if not name:
        raise ModelError(f"{prefix}metadata.name: required value")
    where = path or f"Cluster {name!r}"
    labels_raw = _map(meta.get("labels"), f"{where}: metadata.labels")
    labels = {str(k): _str(v, f"{where}: metadata.labels.{k}") for k, v in labels_raw.items()}
    spec = _map(root.get("spec"), f"{where}: spec")
    status = _map(root.get("status"), f"{where}: status")
    try:
        taints = parse_taints(spec.get("taints"), path="spec.taints")
    except TaintError as err:
        raise ModelError(f"{where}: {err}") from err
    models = []
    for i, raw_model in enumerate(_list(spec.get("resourceModels"), f"{where}: spec.resourceModels")):
        mpath = f"{where}: spec.resourceModels[{i}]"
        model = _map(raw_model, mpath)
        ranges = []
        for j, raw_range in enumerate(_list(model.get("ranges"), f"{mpath}.ranges")):
            rpath = f"{mpath}.ranges[{j}]"
            rng = _map(raw_range, rpath)
            low = _quantity(rng.get("min"), f"{rpath}.min")
            high = _quantity(rng.get("max"), f"{rpath}.max")
            ranges.append(ResourceModelRange(_str(rng.get("name"), f"{rpath}.name"), low, high))
        models.append(ResourceModel(_int(model.get("grade"), f"{mpath}.grade"), tuple(ranges)))
    enablements: dict[str, frozenset[str]] = {}
    for i, raw_api in enumerate(_list(status.get("apiEnablements"), f"{where}: status.apiEnablements")):
        apath = f"{where}: status.apiEnablements[{i}]"
        api = _map(raw_api, apath)
        group_version = _str(api.get("groupVersion"), f"{apath}.groupVersion")
        kinds = {
            _str(_map(res, f"{apath}.resources[{j}]").get("kind"), f"{apath}.resources[{j}].kind")
            for j, res in enumerate(_list(api.get("resources"), f"{apath}.resources"))
        }
        enablements[group_version] = enablements.get(group_version, frozenset()) | kinds
    summary = None
    if status.get("resourceSummary") is not None:
        spath = f"{where}: status.resourceSummary"
        raw_summary = _map(status.get("resourceSummary"), spath)
        modelings = []
        raw_modelings = _list(raw_summary.get("allocatableModelings"), f"{spath}.allocatableModelings")
        for i, raw_modeling in enumerate(raw_modelings):
            mpath = f"{spath}.allocatableModelings[{i}]"
            modeling = _map(raw_modeling, mpath)
            modelings.append(AllocatableModeling(_int(modeling.get("grade"), f"{mpath}.grade"),
                                                 _int(modeling.get("count"), f"{mpath}.count", low=0)))
        summary = ResourceSummary(
            allocatable=_quantities(raw_summary.get("allocatable"), f"{spath}.allocatable"),
            allocating=_quantities(raw_summary.get("allocating"), f"{spath}.allocating"),
            allocated=_quantities(raw_summary.get("allocated"), f"{spath}.allocated"),
            allocatable_modelings=tuple(modelings),
        )
    return Cluster(
        name=name,
        labels=labels,
        provider=_str(spec.get("provider"), f"{where}: spec.provider"),
        region=_str(spec.get("region"), f"{where}: spec.region"),
        zone=_str(spec.get("zone"), f"{where}: spec.zone"),
        zones=_str_list(spec.get("zones"), f"{where}: spec.zones"),
        taints=taints,
        resource_models=tuple(models),
        api_enablements=enablements,
        resource_summary=summary,
        deleting=bool(meta.get("deletionTimestamp")),
    )


# --------------------------------------------------------------------------- Placement


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One ``fieldSelector.matchExpressions`` entry on ``provider``, ``region`` or ``zone``."""

    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClusterAffinity:
    """``ClusterAffinity``: label selector, field selector, names and exclusions, all ANDed."""

    label_selector: LabelSelector | None = None
    field_selector: tuple[FieldRequirement, ...] | None = None
    cluster_names: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    #: A label selector that does not compile: upstream's ClusterMatches matches no cluster.
    matches_nothing: bool = False
    # Derived once, so that matching a cluster costs the same however many names the lists hold.
    names: frozenset[str] = field(init=False, repr=False, compare=False)
    excluded: frozenset[str] = field(init=False, repr=False, compare=False)
    #: The field requirements on provider and region as a node selector over those fields (None: none).
    field_nodes: NodeSelector | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(self.cluster_names))
        object.__setattr__(self, "excluded", frozenset(self.exclude))
        others = [{"key": req.key, "operator": req.operator, "values": list(req.values)}
                  for req in self.field_selector or () if req.key != ZONE_FIELD]
        # A requirement upstream's NodeSelectorRequirementsAsSelector rejects makes the term never match.
        object.__setattr__(self, "field_nodes",
                           compile_node_selector([{"matchExpressions": others}]) if others else None)


@dataclass(frozen=True, slots=True)
class ClusterAffinityTerm:
    """A ``clusterAffinities`` term; ``overflow`` lists its ``overflowAffinities`` tiers in order."""

    name: str
    affinity: ClusterAffinity
    overflow: tuple[tuple[str, ClusterAffinity], ...] = ()
    #: ``overflowAffinities`` is present, even as an empty list (Go's non-nil slice): overflow
    #: assignment and its validation apply.
    has_overflow: bool = False

    @property
    def tiers(self) -> tuple[ClusterAffinity, ...]:
        """The primary group first, then each overflow tier."""
        return (self.affinity, *(aff for _name, aff in self.overflow))


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """``spreadConstraints[i]``: by a field (cluster/region/zone/provider) or by a label."""

    spread_by_field: str = ""
    spread_by_label: str = ""
    max_groups: int = 0
    min_groups: int = 0


@dataclass(frozen=True, slots=True)
class StaticClusterWeight:
    """``weightPreference.staticWeightList[i]``."""

    target: ClusterAffinity
    weight: int


@dataclass(frozen=True, slots=True)
class ReplicaScheduling:
    """``replicaScheduling``; ``weight_preference_set`` is False when ``weightPreference`` is absent (nil)."""

    scheduling_type: str = DIVIDED
    division_preference: str = ""
    weight_preference_set: bool = False
    static_weights: tuple[StaticClusterWeight, ...] = ()
    dynamic_weight: str = ""


@dataclass(frozen=True, slots=True)
class Placement:
    """``PropagationPolicy.spec.placement`` (also copied into ``ResourceBinding.spec.placement``)."""

    cluster_affinity: ClusterAffinity | None = None
    cluster_affinities: tuple[ClusterAffinityTerm, ...] = ()
    #: ``clusterAffinities`` is present, even as an empty list: karmada-scheduler then takes the
    #: affinity-terms path, which with no term schedules nothing.
    has_cluster_affinities: bool = False
    tolerations: tuple[Toleration, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    replica_scheduling: ReplicaScheduling | None = None

    @property
    def scheduling_type(self) -> str:
        """Upstream ``Placement.ReplicaSchedulingType()``: Duplicated when replicaScheduling is unset."""
        return DUPLICATED if self.replica_scheduling is None else self.replica_scheduling.scheduling_type

    def term(self, name: str) -> ClusterAffinityTerm | None:
        """The ``clusterAffinities`` term called ``name``."""
        for term in self.cluster_affinities:
            if term.name == name:
                return term
        return None


def _affinity(obj: object, path: str, *, validate: bool = True) -> ClusterAffinity:
    """A ``ClusterAffinity``; ``validate`` applies the webhook's ``ValidateClusterAffinity`` (upstream
    checks the placement's affinities and affinity terms, not the targets of static weights)."""
    raw = _map(obj, path)
    field_selector: tuple[FieldRequirement, ...] | None = None
    if raw.get("fieldSelector") is not None:
        fpath = f"{path}.fieldSelector"
        reqs = []
        for i, expr in enumerate(_list(_map(raw.get("fieldSelector"), fpath).get("matchExpressions"),
                                       f"{fpath}.matchExpressions")):
            epath = f"{fpath}.matchExpressions[{i}]"
            body = _map(expr, epath)
            key = _str(body.get("key"), f"{epath}.key")
            operator = _str(body.get("operator"), f"{epath}.operator")
            # karmada-webhook's ValidatePolicyFieldSelector, with its messages (Go's %q quoting).
            if validate and key not in (PROVIDER_FIELD, REGION_FIELD, ZONE_FIELD):
                raise ModelError(f"{fpath}: unsupported key {_go_quote(key)}, must be provider, region, or zone")
            if validate and operator not in ("In", "NotIn"):
                raise ModelError(f"{fpath}: unsupported operator {_go_quote(operator)}, must be In or NotIn")
            reqs.append(FieldRequirement(key, operator, _str_list(body.get("values"), f"{epath}.values")))
        field_selector = tuple(reqs)
    if raw.get("excludeClusters") is not None and raw.get("exclude") is None:
        raise ModelError(f"{path}.excludeClusters: unknown field; the JSON key of excluded clusters is 'exclude'")
    label_selector: LabelSelector | None = None
    never = False
    if raw.get("labelSelector") is not None:
        try:
            label_selector = compile_label_selector(_map(raw.get("labelSelector"), f"{path}.labelSelector"),
                                                    path=f"{path}.labelSelector")
        except SelectorError:
            # Upstream validates no label selector; ClusterMatches treats one it cannot compile as
            # matching no cluster.
            never = True
    return ClusterAffinity(
        label_selector=label_selector,
        field_selector=field_selector,
        cluster_names=_str_list(raw.get("clusterNames"), f"{path}.clusterNames"),
        exclude=_str_list(raw.get("exclude"), f"{path}.exclude"),
        matches_nothing=never,
    )


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the plain strings of error messages."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)
_LABEL_KEY_MSG: Final = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                         "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                         f"validation is '{_LABEL_KEY_FMT}')")
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG: Final = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                                 "'-' or '.', and must start and end with an alphanumeric character (e.g. "
                                 f"'example.com', regex used for validation is '{_DNS1123_SUBDOMAIN_FMT}')")


def _label_key_errors(key: str) -> list[str]:
    """``content.IsLabelKey`` of the apimachinery Karmada v1.18.2 builds with (v0.35.3), its messages
    included ("bytes", every complaint about the name part)."""
    parts = key.split("/")
    errors: list[str] = []
    if len(parts) > 2:
        return [f"a valid label key {_LABEL_KEY_MSG} with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:
                errors.append("prefix part must be no more than 253 bytes")
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errors.append(f"prefix part {_DNS1123_SUBDOMAIN_MSG}")
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.fullmatch(name):
        errors.append(f"name part {_LABEL_KEY_MSG}")
    return errors


def _label_key(name: str, path: str) -> None:
    """Affinity names must be label keys (the webhook's check; the first complaint is raised)."""
    for message in _label_key_errors(name):
        raise ModelError(f"{path}: {message}")


def _spread_constraints(obj: object, path: str) -> tuple[SpreadConstraint, ...]:
    constraints = []
    for i, raw in enumerate(_list(obj, path)):
        cpath = f"{path}[{i}]"
        body = _map(raw, cpath)
        by_field = _str(body.get("spreadByField"), f"{cpath}.spreadByField")
        by_label = _str(body.get("spreadByLabel"), f"{cpath}.spreadByLabel")
        if by_field and by_field not in SPREAD_FIELDS:
            raise ModelError(f"{cpath}.spreadByField: unsupported value {by_field!r}, "
                             f"expected one of {list(SPREAD_FIELDS)}")
        max_groups = _int(body.get("maxGroups"), f"{cpath}.maxGroups")
        min_groups = _int(body.get("minGroups"), f"{cpath}.minGroups")
        # Webhook defaulting (helper.SetDefaultSpreadConstraints).
        if not by_field and not by_label:
            by_field = SPREAD_BY_CLUSTER
        if min_groups == 0:
            min_groups = 1
        constraints.append(SpreadConstraint(by_field, by_label, max_groups, min_groups))
    _validate_spread_constraints(constraints, path)
    return tuple(constraints)


def _validate_spread_constraints(constraints: Sequence[SpreadConstraint], path: str) -> None:
    """Upstream ``ValidateSpreadConstraint``; the first problem is raised."""
    seen: set[str] = set()
    for i, c in enumerate(constraints):
        cpath = f"{path}[{i}]"
        if c.spread_by_field and c.spread_by_label:
            raise ModelError(f"{cpath}: spreadByLabel should not co-exist with spreadByField")
        if c.min_groups < 0:
            raise ModelError(f"{cpath}: minGroups lower than 0 is not allowed")
        if c.max_groups < 0:
            raise ModelError(f"{cpath}: maxGroups lower than 0 is not allowed")
        if 0 < c.max_groups < c.min_groups:
            raise ModelError(f"{cpath}: maxGroups lower than minGroups is not allowed")
        if c.spread_by_field:
            if c.spread_by_field in seen:
                raise ModelError(f"{path}: multiple {c.spread_by_field} spread constraints are not allowed")
            seen.add(c.spread_by_field)
    if seen and SPREAD_BY_CLUSTER not in seen:
        raise ModelError(f"{path}: the cluster spread constraint must be enabled in one of the constraints "
                         "in case of SpreadByField is enabled")


def _replica_scheduling(obj: object, path: str) -> ReplicaScheduling | None:
    if obj is None:
        return None
    raw = _map(obj, path)
    scheduling_type = _str(raw.get("replicaSchedulingType"), f"{path}.replicaSchedulingType") or DIVIDED
    if scheduling_type not in (DUPLICATED, DIVIDED):
        raise ModelError(f"{path}.replicaSchedulingType: unsupported value {scheduling_type!r}, "
                         f"expected one of {[DUPLICATED, DIVIDED]}")
    preference = _str(raw.get("replicaDivisionPreference"), f"{path}.replicaDivisionPreference")
    if preference and preference not in (AGGREGATED, WEIGHTED):
        raise ModelError(f"{path}.replicaDivisionPreference: unsupported value {preference!r}, "
                         f"expected one of {[AGGREGATED, WEIGHTED]}")
    if scheduling_type == DIVIDED and not preference:
        preference = WEIGHTED  # helper.SetReplicaDivisionPreferenceWeighted
    weights: list[StaticClusterWeight] = []
    dynamic = ""
    pref_raw = raw.get("weightPreference")
    if pref_raw is not None:
        wpath = f"{path}.weightPreference"
        pref = _map(pref_raw, wpath)
        for i, item in enumerate(_list(pref.get("staticWeightList"), f"{wpath}.staticWeightList")):
            ipath = f"{wpath}.staticWeightList[{i}]"
            body = _map(item, ipath)
            weight = _int(body.get("weight"), f"{ipath}.weight", low=1, high=INT64_MAX)
            target = _affinity(body.get("targetCluster"), f"{ipath}.targetCluster", validate=False)
            weights.append(StaticClusterWeight(target, weight))
        dynamic = _str(pref.get("dynamicWeight"), f"{wpath}.dynamicWeight")
        if dynamic and dynamic != DYNAMIC_WEIGHT_AVAILABLE_REPLICAS:
            raise ModelError(f"{wpath}.dynamicWeight: unsupported value {dynamic!r}, "
                             f"expected {DYNAMIC_WEIGHT_AVAILABLE_REPLICAS!r}")
    return ReplicaScheduling(scheduling_type, preference, pref_raw is not None, tuple(weights), dynamic)


def parse_placement(obj: object, *, path: str = "placement") -> Placement:
    """Build a :class:`Placement` from its JSON shape, with webhook defaulting and validation."""
    raw = _map(obj, path)
    affinity = None
    if raw.get("clusterAffinity") is not None:
        affinity = _affinity(raw.get("clusterAffinity"), f"{path}.clusterAffinity")
    terms = []
    names: set[str] = set()
    for i, raw_term in enumerate(_list(raw.get("clusterAffinities"), f"{path}.clusterAffinities")):
        tpath = f"{path}.clusterAffinities[{i}]"
        body = _map(raw_term, tpath)
        name = _str(body.get("affinityName"), f"{tpath}.affinityName")
        _label_key(name, tpath)
        if name in names:
            raise ModelError(f"{path}.clusterAffinities: each affinity term in a policy must have a unique name")
        names.add(name)
        overflow = []
        for j, raw_over in enumerate(_list(body.get("overflowAffinities"), f"{tpath}.overflowAffinities")):
            opath = f"{tpath}.overflowAffinities[{j}]"
            over = _map(raw_over, opath)
            oname = _str(over.get("affinityName"), f"{opath}.affinityName")
            _label_key(oname, f"{opath}.affinityName")
            overflow.append((oname, _affinity(over, opath)))
        terms.append(ClusterAffinityTerm(name, _affinity(body, tpath), tuple(overflow),
                                         body.get("overflowAffinities") is not None))
    if affinity is not None and raw.get("clusterAffinities") is not None:
        raise ModelError(f"{path}: clusterAffinities cannot co-exist with clusterAffinity")
    try:
        tolerations = parse_tolerations(raw.get("clusterTolerations"), path=f"{path}.clusterTolerations")
    except TaintError as err:
        raise ModelError(str(err)) from err
    for i, toleration in enumerate(tolerations):
        if toleration.operator in ("Lt", "Gt"):  # validateClusterTolerations
            raise ModelError(f'{path}.clusterTolerations[{i}].operator: Unsupported value: "{toleration.operator}": '
                             'supported values: "", "Exists", "Equal"')
    scheduling = _replica_scheduling(raw.get("replicaScheduling"), f"{path}.replicaScheduling")
    # ValidatePlacement / ValidateOverflowAffinities (pkg/util/validation/validation.go), with its messages.
    overflow_allowed = scheduling is not None and scheduling.scheduling_type == DIVIDED and (
        scheduling.division_preference == AGGREGATED
        or (scheduling.division_preference == WEIGHTED and scheduling.weight_preference_set
            and bool(scheduling.dynamic_weight)))
    for i, term in enumerate(terms):
        if not term.has_overflow:
            continue
        opath = f"{path}.clusterAffinities[{i}].overflowAffinities"
        if not overflow_allowed:
            raise ModelError(f"{opath}: overflowAffinities can only be used together with dynamic weight or "
                             "aggregated scheduling")
        if term.affinity == ClusterAffinity():
            raise ModelError(f"{opath}: overflowAffinities can only be used together with the inline ClusterAffinity")
        seen_names = {term.name}
        for j, (oname, _aff) in enumerate(term.overflow):
            if oname in seen_names:
                raise ModelError(f"{opath}[{j}].affinityName: overflow affinity name must be unique and must not "
                                 "duplicate the primary group's affinityName")
            seen_names.add(oname)
    return Placement(
        cluster_affinity=affinity,
        cluster_affinities=tuple(terms),
        has_cluster_affinities=raw.get("clusterAffinities") is not None,
        tolerations=tolerations,
        spread_constraints=_spread_constraints(raw.get("spreadConstraints"), f"{path}.spreadConstraints"),
        replica_scheduling=scheduling,
    )


def parse_placement_source(obj: Mapping[str, Any], *, path: str = "") -> Placement:
    """A placement from a (Cluster)PropagationPolicy, a ResourceBinding or a bare placement object."""
    root = _map(obj, path or "policy")
    prefix = f"{path}." if path else ""
    kind = _kind(root, prefix)
    if kind in _POLICY_KINDS or kind in _BINDING_KINDS:
        spec = _map(root.get("spec"), f"{prefix}spec")
        if spec.get("placement") is None:
            raise ModelError(f"{prefix}spec.placement: required value")
        return parse_placement(spec.get("placement"), path=f"{prefix}spec.placement")
    if kind is not None:
        raise ModelError(f"{prefix}kind: expected PropagationPolicy, ClusterPropagationPolicy or a placement, "
                         f"got {kind!r}")
    return parse_placement(root, path=path or "placement")


# --------------------------------------------------------------------------- ResourceBinding


@dataclass(frozen=True, slots=True)
class TargetCluster:
    """``spec.clusters[i]``: a cluster and the replicas it runs."""

    name: str
    replicas: int = 0


@dataclass(frozen=True, slots=True)
class ObjectReference:
    """``spec.resource``: the workload the binding propagates."""

    api_version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""


@dataclass(frozen=True, slots=True)
class GracefulEvictionTask:
    """``spec.gracefulEvictionTasks[i]``: a cluster the workload is being evicted from."""

    from_cluster: str
    replicas: int | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ResourceBinding:
    """The parts of a ResourceBinding the scheduler reads."""

    resource: ObjectReference = field(default_factory=ObjectReference)
    replicas: int = 0
    #: ``replicaRequirements.resourceRequest``; ``None`` when ``replicaRequirements`` is absent.
    resource_request: dict[str, GoQuantity] | None = None
    has_replica_requirements: bool = False
    clusters: tuple[TargetCluster, ...] = ()
    placement: Placement | None = None
    eviction_tasks: tuple[GracefulEvictionTask, ...] = ()
    reschedule_triggered_at: datetime | None = None
    observed_affinity_name: str = ""
    last_scheduled_time: datetime | None = None
    name: str = ""
    namespace: str = ""
    # Derived once: the filters ask these of every cluster.
    _first_replicas: dict[str, int] = field(init=False, repr=False, compare=False)
    _evicted_from: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        first: dict[str, int] = {}
        for target in self.clusters:
            first.setdefault(target.name, target.replicas)
        object.__setattr__(self, "_first_replicas", first)
        object.__setattr__(self, "_evicted_from", frozenset(task.from_cluster for task in self.eviction_tasks))

    def evicting_from(self, cluster: str) -> bool:
        """The cluster is the source of a graceful eviction task."""
        return cluster in self._evicted_from

    @property
    def is_workload(self) -> bool:
        """Upstream ``ResourceBindingSpec.IsWorkload``: replicas, or ``replicaRequirements`` even with 0 replicas."""
        return self.replicas > 0 or self.has_replica_requirements

    def target_contains(self, cluster: str) -> bool:
        """Upstream ``ResourceBindingSpec.TargetContains``."""
        return cluster in self._first_replicas

    def assigned_replicas_for(self, cluster: str) -> int:
        """Upstream ``AssignedReplicasForCluster``: the first entry's replicas, 0 when absent."""
        return self._first_replicas.get(cluster, 0)


def _check_cpu_millicores(request: Mapping[str, GoQuantity] | None, path: str) -> None:
    """Refuse a CPU request whose millicores do not fit in an int64: Go's ``MilliValue()`` reads such an
    amount as 0, and Karmada's general estimator divides by it (a panic upstream, a crash here)."""
    cpu = (request or {}).get("cpu")
    if cpu is not None and cpu.value() > 0 and cpu.milli_value() == 0:
        raise ModelError(f"{path}.cpu: Invalid value: too large: {cpu.value()} cores do not fit in a 64-bit count "
                         "of millicores")


def parse_binding(obj: Mapping[str, Any], *, path: str = "") -> ResourceBinding:
    """Build a :class:`ResourceBinding` from a ``work.karmada.io/v1alpha2`` (Cluster)ResourceBinding."""
    root = _map(obj, path or "ResourceBinding")
    prefix = f"{path}." if path else ""
    kind = _kind(root, prefix)
    if kind is not None and kind not in _BINDING_KINDS:
        raise ModelError(f"{prefix}kind: expected ResourceBinding or ClusterResourceBinding, got {kind!r}")
    meta = _map(root.get("metadata"), f"{prefix}metadata")
    spec = _map(root.get("spec"), f"{prefix}spec")
    status = _map(root.get("status"), f"{prefix}status")
    res = _map(spec.get("resource"), f"{prefix}spec.resource")
    resource = ObjectReference(
        api_version=_str(res.get("apiVersion"), f"{prefix}spec.resource.apiVersion"),
        kind=_str(res.get("kind"), f"{prefix}spec.resource.kind"),
        namespace=_str(res.get("namespace"), f"{prefix}spec.resource.namespace"),
        name=_str(res.get("name"), f"{prefix}spec.resource.name"),
        uid=_str(res.get("uid"), f"{prefix}spec.resource.uid"),
    )
    requirements = spec.get("replicaRequirements")
    request = None
    if requirements is not None:
        rpath = f"{prefix}spec.replicaRequirements"
        request = _quantities(_map(requirements, rpath).get("resourceRequest"), f"{rpath}.resourceRequest")
        _check_cpu_millicores(request, f"{rpath}.resourceRequest")
    clusters = []
    for i, raw in enumerate(_list(spec.get("clusters"), f"{prefix}spec.clusters")):
        cpath = f"{prefix}spec.clusters[{i}]"
        body = _map(raw, cpath)
        name = _str(body.get("name"), f"{cpath}.name")
        if not name:
            raise ModelError(f"{cpath}.name: required value")
        clusters.append(TargetCluster(name, _int(body.get("replicas"), f"{cpath}.replicas", low=0)))
    tasks = []
    for i, raw in enumerate(_list(spec.get("gracefulEvictionTasks"), f"{prefix}spec.gracefulEvictionTasks")):
        tpath = f"{prefix}spec.gracefulEvictionTasks[{i}]"
        body = _map(raw, tpath)
        replicas = body.get("replicas")
        tasks.append(GracefulEvictionTask(
            _str(body.get("fromCluster"), f"{tpath}.fromCluster"),
            None if replicas is None else _int(replicas, f"{tpath}.replicas", low=0),
            _str(body.get("reason"), f"{tpath}.reason"),
        ))
    placement = None
    if spec.get("placement") is not None:
        placement = parse_placement(spec.get("placement"), path=f"{prefix}spec.placement")
    return ResourceBinding(
        resource=resource,
        replicas=_int(spec.get("replicas"), f"{prefix}spec.replicas", low=0),
        resource_request=request,
        has_replica_requirements=requirements is not None,
        clusters=tuple(clusters),
        placement=placement,
        eviction_tasks=tuple(tasks),
        reschedule_triggered_at=_time(spec.get("rescheduleTriggeredAt"), f"{prefix}spec.rescheduleTriggeredAt"),
        observed_affinity_name=_str(status.get("schedulerObservingAffinityName"),
                                    f"{prefix}status.schedulerObservingAffinityName"),
        last_scheduled_time=_time(status.get("lastScheduledTime"), f"{prefix}status.lastScheduledTime"),
        name=_str(meta.get("name"), f"{prefix}metadata.name"),
        namespace=_str(meta.get("namespace"), f"{prefix}metadata.namespace"),
    )
