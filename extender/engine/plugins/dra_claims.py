"""The pod's ResourceClaims as DynamicResources reads them: resolution, allocation, binding readiness.

Upstream: ``k8s.io/dynamic-resource-allocation/resourceclaim`` (``Name``, ``IsForPod``) and the claim
checks of ``dynamicresources.go`` (``foreachPodResourceClaim``, ``isClaimReadyForBinding``,
``isClaimTimeout``), with upstream's error texts.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from extender.cluster.dra_objects import ClaimEntry, DRAView
from extender.cluster.records import PodRecord


class ClaimsUnusable(Exception):
    """The pod's claims cannot be used at the moment (upstream's foreachPodResourceClaim errors)."""


def claim_meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's metadata ({} when missing or malformed)."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def claim_status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's status ({} when missing or malformed)."""
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def claim_allocation(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``status.allocation``, or None for a claim not allocated."""
    allocation = claim_status(claim).get("allocation")
    return allocation if isinstance(allocation, Mapping) else None


def claim_requests(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``spec.devices.requests`` (the well-formed entries)."""
    spec = claim.get("spec")
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    return [r for r in requests if isinstance(r, Mapping)] if isinstance(requests, list) else []


def _controlled_by(claim: Mapping[str, Any], uid: str) -> bool:
    """metav1.IsControlledBy: the claim's controller owner reference has the pod's UID."""
    for ref in claim_meta(claim).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return str(ref.get("uid") or "") == uid
    return False


def pod_claims(pod: PodRecord, dra: DRAView) -> list[ClaimEntry]:
    """The claims of the pod's ``spec.resourceClaims``, in order (upstream's podResourceClaims).

    Raises :class:`ClaimsUnusable` with upstream's message when one cannot be used.
    """
    memo_key = "dra.claim_refs"
    refs = pod.memo.get(memo_key)
    if refs is None:
        refs = _claim_refs(pod)
        pod.memo[memo_key] = refs
    out: list[ClaimEntry] = []
    for ref in refs:
        if isinstance(ref, ClaimsUnusable):
            raise ref
        claim_name, must_check_owner = ref
        if claim_name is None:
            continue  # a template for which no claim was needed: skipped, as upstream
        entry = dra.claim(pod.namespace, claim_name)
        if entry is None:
            raise ClaimsUnusable(f'could not find ResourceClaim "{pod.namespace}/{claim_name}"')
        meta = claim_meta(entry.raw)
        if meta.get("deletionTimestamp") is not None:
            raise ClaimsUnusable(f'resourceclaim "{claim_name}" is being deleted')
        if must_check_owner:
            claim_namespace = str(meta.get("namespace") or "default")
            if claim_namespace != pod.namespace:
                raise ClaimsUnusable(f"ResourceClaim {claim_namespace}/{claim_name} is not in the same namespace "
                                     f"as Pod {pod.namespace}/{pod.name}")
            if not _controlled_by(entry.raw, pod.uid):
                raise ClaimsUnusable(f"ResourceClaim {claim_namespace}/{claim_name} was not created for Pod "
                                     f"{pod.namespace}/{pod.name} (Pod is not owner)")
        out.append(entry)
    return out


def _claim_refs(pod: PodRecord) -> list[tuple[str | None, bool] | ClaimsUnusable]:
    """Each spec.resourceClaims entry resolved to (claim name, must check owner), as resourceclaim.Name."""
    spec = pod.raw.get("spec")
    entries = spec.get("resourceClaims") if isinstance(spec, Mapping) else None
    if not isinstance(entries, list):
        return []
    status = pod.raw.get("status")
    statuses = status.get("resourceClaimStatuses") if isinstance(status, Mapping) else None
    generated: list[Mapping[str, Any]] = [s for s in statuses if isinstance(s, Mapping)] \
        if isinstance(statuses, list) else []
    refs: list[tuple[str | None, bool] | ClaimsUnusable] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        entry_name = str(entry.get("name") or "")
        if entry.get("resourceClaimName") is not None:
            refs.append((str(entry["resourceClaimName"]), False))
        elif entry.get("resourceClaimTemplateName") is not None:
            for generated_status in generated:
                if generated_status.get("name") == entry_name:
                    name = generated_status.get("resourceClaimName")
                    refs.append((None if name is None else str(name), True))
                    break
            else:
                refs.append(ClaimsUnusable(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'))
                break
        else:
            refs.append(ClaimsUnusable(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{entry_name}": '
                                       "none of the supported fields are set"))
            break
    return refs


def has_claims(pod: PodRecord) -> bool:
    """Whether the pod lists any ResourceClaim (cheap: no lookup)."""
    spec = pod.raw.get("spec")
    return isinstance(spec, Mapping) and bool(spec.get("resourceClaims"))


def _condition_true(conditions: Any, condition_type: Any) -> Mapping[str, Any] | None:
    if not isinstance(conditions, list):
        return None
    for cond in conditions:
        if isinstance(cond, Mapping) and cond.get("type") == condition_type:
            return cond
    return None


class BindingFailed(Exception):
    """A device's binding failure condition is true (upstream's ErrDeviceBindingFailed)."""


def claim_ready_for_binding(claim: Mapping[str, Any]) -> bool:
    """isClaimReadyForBinding: every binding condition of every allocated device is true.

    Raises BindingFailed when a binding failure condition is true.
    """
    allocation = claim_allocation(claim)
    if allocation is None:
        return False
    devices = allocation.get("devices")
    results = devices.get("results") if isinstance(devices, Mapping) else None
    statuses = claim_status(claim).get("devices")
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, Mapping) or not result.get("bindingConditions"):
            continue
        device_status = None
        for candidate in statuses if isinstance(statuses, list) else []:
            if isinstance(candidate, Mapping) and all(
                    candidate.get(k) == result.get(k) for k in ("device", "driver", "pool")):
                device_status = candidate
                break
        if device_status is None:
            return False
        conditions = device_status.get("conditions")
        for cond_type in result.get("bindingFailureConditions") or []:
            cond = _condition_true(conditions, cond_type)
            if cond is not None and cond.get("status") == "True":
                raise BindingFailed(cond_type)
        for cond_type in result.get("bindingConditions") or []:
            cond = _condition_true(conditions, cond_type)
            if cond is None or cond.get("status") != "True":
                return False
    return True


def claim_binding_timed_out(claim: Mapping[str, Any], binding_timeout: float, now: float) -> bool:
    """isClaimTimeout: a device waits on binding conditions longer than bindingTimeout since allocation."""
    allocation = claim_allocation(claim)
    if allocation is None:
        return False
    stamp = allocation.get("allocationTimestamp")
    if not isinstance(stamp, str) or not stamp:
        return False
    devices = allocation.get("devices")
    results = devices.get("results") if isinstance(devices, Mapping) else None
    if not any(isinstance(r, Mapping) and r.get("bindingConditions") is not None
               for r in (results if isinstance(results, list) else [])):
        return False
    try:
        allocated_at = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return False
    return allocated_at + binding_timeout < now
