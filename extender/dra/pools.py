"""Resource pools visible from one node, gathered as upstream's incubating ``GatherPools`` does.

A pool (driver + pool name) is made of the ResourceSlices of its newest generation. Slices are
picked for a node by ``nodeName``, ``allNodes``, ``nodeSelector``, per-device node selection or,
for slices that publish shared counters, always (v0.36.3). A pool with fewer slices than
``resourceSliceCount`` is *incomplete*; one with duplicate device names, duplicate counter sets or a
device consuming an unknown counter is *invalid*. Pools are ordered by driver, then pool name, with
the pools that have devices with binding conditions last: this is the allocator's search order.

v0.37.2 (``minor``) picks slices with shared counters by their node selection like any other (a pool
whose counters live in a slice for another node looks incomplete from this node, so all its slices are
read and their counter sets taken), and ignores slices with devices that declare compatibility groups
while DRADeviceCompatibilityGroups is off (their pool then counts as incomplete).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

from extender.dra.records import SliceRecord
from extender.kube.selectors import NodeSelector

__all__ = ["Pool", "gather_pools", "node_matches"]


class PoolError(Exception):
    """A node selector of a slice or device that cannot be parsed (upstream's NewNodeSelector error)."""


@dataclass(slots=True)
class Pool:
    """One resource pool as seen from a node."""

    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[SliceRecord] = field(default_factory=list)  # device slices targeting the node, by name
    slices_not_targeting_node: list[SliceRecord] = field(default_factory=list)
    counter_sets: dict[str, Mapping[str, Fraction]] = field(default_factory=dict)

    @property
    def pool_id(self) -> str:
        """``driver/pool`` as upstream's ``PoolID.String``."""
        return f"{self.driver}/{self.name}"


def node_matches(
    node_name: str,
    node_labels: Mapping[str, str],
    name_to_match: str | None,
    all_nodes: bool,
    selector: NodeSelector | None,
) -> bool:
    """Upstream ``NodeMatches``: by name, for all nodes, or by a node selector (strictly parsed)."""
    if name_to_match:
        return node_name == name_to_match
    if all_nodes:
        return True
    if selector is not None:
        if selector.errors:
            raise PoolError(f"failed to parse node selector: {'; '.join(selector.errors)}")
        return selector.matches(node_labels, node_name)
    return False


def _relevant(slice_: SliceRecord, node_name: str, node_labels: Mapping[str, str], minor: int) -> bool | None:
    """Whether a slice targets the node; None when it targets no node at all (skipped)."""
    if slice_.shared_counters and minor < 37:
        return True
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        try:
            return node_matches(node_name, node_labels, slice_.node_name, slice_.all_nodes, slice_.node_selector)
        except PoolError as err:
            raise PoolError(f"failed to perform node selection for slice {slice_.name}: {err}") from None
    if slice_.per_device_node_selection:
        for device in slice_.devices:
            try:
                if node_matches(node_name, node_labels, device.node_name, device.all_nodes, device.node_selector):
                    return True
            except PoolError as err:
                raise PoolError(
                    f"failed to perform node selection for device {device.name} in slice {slice_.name}: {err}"
                ) from None
        return False
    return None


def _has_binding_conditions(pool: Pool) -> bool:
    return any(device.binding_conditions for s in pool.slices for device in s.devices)


def _counter_consumption_error(counter_sets: Mapping[str, Mapping[str, Fraction]],
                               slices: Sequence[SliceRecord]) -> str:
    for s in slices:
        for device in s.devices:
            for consumption in device.consumes_counters:
                counters = counter_sets.get(consumption.counter_set)
                if counters is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in counters:
                        return f"counter {name} not found in counter set {consumption.counter_set}"
    return ""


def _uses_compatibility_groups(slice_: SliceRecord) -> bool:
    """incubating/compatibility_groups.go sliceUsesCompatibilityGroups."""
    return any(c.compatibility_groups for device in slice_.devices for c in device.consumes_counters)


def _build_pool(driver: str, pool_name: str, slices: list[SliceRecord], partitionable: bool,
                all_slices_for_pool: list[SliceRecord] | None, minor: int) -> Pool:
    slices.sort(key=lambda s: s.name)
    if partitionable:
        device_slices = [s for s in slices if not s.shared_counters]
        counter_slices = [s for s in slices if s.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    not_targeting: list[SliceRecord] = []
    if all_slices_for_pool is not None and len(slices) < len(all_slices_for_pool):
        targeting = {s.name for s in slices}
        for s in all_slices_for_pool:
            if s.name in targeting:
                continue
            # v0.37.2 takes the counter sets of slices read for another node; v0.36.3 read them for every node.
            (counter_slices if minor >= 37 and partitionable and s.shared_counters else not_targeting).append(s)
    seen: set[str] = set()
    for s in device_slices:
        for device in s.devices:
            if device.name in seen:
                return Pool(driver, pool_name, invalid=True, invalid_reason=f"duplicate device name {device.name}")
            seen.add(device.name)
    if not partitionable:
        return Pool(driver, pool_name, slices=device_slices)
    counter_sets: dict[str, Mapping[str, Fraction]] = {}
    for s in counter_slices:
        for counter_set in s.shared_counters:
            if counter_set.name in counter_sets:
                return Pool(driver, pool_name, invalid=True,
                            invalid_reason=f"duplicate counter set name {counter_set.name}")
            counter_sets[counter_set.name] = {k: q.value for k, q in counter_set.counters.items()}
    # v0.36.3 checks what every slice read for the node consumes, v0.37.2 the device slices; then both the rest.
    checked = device_slices if minor >= 37 else slices
    if reason := (_counter_consumption_error(counter_sets, checked)
                  or _counter_consumption_error(counter_sets, not_targeting)):
        return Pool(driver, pool_name, invalid=True, invalid_reason=reason)
    return Pool(driver, pool_name, slices=device_slices, slices_not_targeting_node=not_targeting,
                counter_sets=counter_sets)


#: Pools gathered per node, reused while the node's slices are the same objects (records are immutable).
_CACHE: dict[tuple[str, bool, int, bool],
             tuple[tuple[SliceRecord, ...], frozenset[tuple[str, str]] | None, list[Pool]]] = {}
_CACHE_SIZE: Final = 20_000


def gather_pools(
    slices_for_node: Sequence[SliceRecord],
    node_name: str,
    node_labels: Mapping[str, str],
    partitionable: bool,
    all_slices: Sequence[SliceRecord],
    *,
    minor: int = 37,
    compatibility_groups: bool = False,
) -> list[Pool]:
    """The pools a node can allocate from, in the allocator's search order (do not modify them).

    ``minor``: the dynamic-resource-allocation release whose rules apply; ``compatibility_groups``:
    DRADeviceCompatibilityGroups (v0.37.2 ignores slices that use them without it).

    Raises :class:`PoolError` when a slice's or device's node selector cannot be parsed. The result is
    remembered per node while the same slice records target it (and, for slices picked by node selectors,
    the node has the same labels), unless a pool needed slices of other nodes to be judged complete.
    """
    key = (node_name, partitionable, minor, compatibility_groups)
    uses_labels = any(s.node_selector is not None or s.per_device_node_selection for s in slices_for_node)
    labels = frozenset(node_labels.items()) if uses_labels else None
    cached = _CACHE.get(key)
    if (
        cached is not None
        and len(cached[0]) == len(slices_for_node)
        and all(a is b for a, b in zip(cached[0], slices_for_node, strict=True))
        and cached[1] == labels
    ):
        return cached[2]
    pools, cacheable = _gather(slices_for_node, node_name, node_labels, partitionable, all_slices, minor,
                               skip_grouped=minor >= 37 and not compatibility_groups)
    if cacheable:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = (tuple(slices_for_node), labels, pools)
    return pools


def _gather(
    slices_for_node: Sequence[SliceRecord],
    node_name: str,
    node_labels: Mapping[str, str],
    partitionable: bool,
    all_slices: Sequence[SliceRecord],
    minor: int,
    *,
    skip_grouped: bool,
) -> tuple[list[Pool], bool]:
    cacheable = True
    by_pool: dict[tuple[str, str], list[SliceRecord]] = {}
    for s in slices_for_node:
        if not partitionable and (s.per_device_node_selection or s.shared_counters):
            continue
        if skip_grouped and _uses_compatibility_groups(s):
            continue
        if not _relevant(s, node_name, node_labels, minor):
            continue
        key = (s.driver, s.pool_name)
        current = by_pool.get(key)
        if current is None or s.pool_generation > current[0].pool_generation:
            by_pool[key] = [s]
        elif s.pool_generation == current[0].pool_generation:
            current.append(s)

    pools: list[Pool] = []
    with_binding: list[Pool] = []
    for (driver, pool_name), pool_slices in by_pool.items():
        generation = pool_slices[0].pool_generation
        expected = pool_slices[0].resource_slice_count
        all_for_pool: list[SliceRecord] | None = None
        if len(pool_slices) != expected:
            cacheable = False  # the answer depends on slices published for other nodes
            obsolete = False
            all_for_pool = []
            for s in all_slices:
                if s.driver != driver or s.pool_name != pool_name:
                    continue
                if s.pool_generation == generation:
                    all_for_pool.append(s)
                elif s.pool_generation > generation:
                    obsolete = True
                    break
            if obsolete:
                continue
            if skip_grouped:
                all_for_pool = [s for s in all_for_pool if not _uses_compatibility_groups(s)]
            if len(all_for_pool) != expected:
                pools.append(Pool(driver, pool_name, incomplete=True))
                continue
        pool = _build_pool(driver, pool_name, pool_slices, partitionable, all_for_pool, minor)
        (with_binding if _has_binding_conditions(pool) else pools).append(pool)
    pools.sort(key=lambda p: (p.driver, p.name))
    with_binding.sort(key=lambda p: (p.driver, p.name))
    return pools + with_binding, cacheable
