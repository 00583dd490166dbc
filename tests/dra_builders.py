"""Builders of ``resource.k8s.io/v1`` objects for the DRA tests (cluster, engine, service)."""

from __future__ import annotations

from typing import Any

GPU_DRIVER = "gpu.example.com"


def device_class(name: str = "gpu.example.com", expression: str | None = f'device.driver == "{GPU_DRIVER}"',
                 ) -> dict[str, Any]:
    """A DeviceClass selecting the devices of one driver (or every device without an expression)."""
    spec: dict[str, Any] = {}
    if expression is not None:
        spec["selectors"] = [{"cel": {"expression": expression}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name, "uid": f"dc-{name}"},
            "spec": spec}


def gpu(name: str, model: str = "a100", memory: str = "40Gi", **extra: Any) -> dict[str, Any]:
    """A GPU device with a model attribute and a memory capacity."""
    return {"name": name, "attributes": {"model": {"string": model}}, "capacity": {"memory": {"value": memory}},
            **extra}


def resource_slice(node: str, devices: list[dict[str, Any]], *, driver: str = GPU_DRIVER, name: str = "",
                   count: int = 1, **spec: Any) -> dict[str, Any]:
    """A ResourceSlice of a node's pool (the pool is named after the node)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name or f"{node}-{driver}", "uid": f"slice-{name or node}"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": count},
                     **({"devices": devices} if devices else {}), **spec}}


def exact_request(name: str = "gpu", device_class_name: str = "gpu.example.com", count: int = 1,
                  **extra: Any) -> dict[str, Any]:
    """A request for ``count`` devices of a class."""
    return {"name": name, "exactly": {"deviceClassName": device_class_name, "allocationMode": "ExactCount",
                                      "count": count, **extra}}


def claim(name: str, requests: list[dict[str, Any]], *, namespace: str = "default", owner_uid: str = "",
          allocated_on: str = "", devices: list[str] | None = None, resource_version: str = "1",
          **spec: Any) -> dict[str, Any]:
    """A ResourceClaim; ``allocated_on`` allocates ``devices`` of that node's pool to its first request."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"claim-{namespace}-{name}",
                            "resourceVersion": resource_version}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid,
                                    "controller": True}]
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                           "spec": {"devices": {"requests": requests, **spec}}}
    if allocated_on:
        request = requests[0]["name"]
        obj["status"] = {
            "allocation": {
                "devices": {"results": [{"request": request, "driver": GPU_DRIVER, "pool": allocated_on,
                                         "device": d} for d in devices or []]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": "other", "uid": "other-uid"}],
        }
    return obj


def pod_with_claims(*refs: dict[str, Any], name: str = "p", uid: str = "pod-uid",
                    statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A pending pod whose spec.resourceClaims are ``refs`` (and status.resourceClaimStatuses)."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": "default", "uid": uid},
                           "spec": {"containers": [{"name": "c", "image": "busybox"}],
                                    "resourceClaims": list(refs)},
                           "status": {"phase": "Pending"}}
    if statuses is not None:
        pod["status"]["resourceClaimStatuses"] = statuses
    return pod
