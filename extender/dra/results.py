"""What the allocator returns and raises, in the shape of upstream's ``resourceapi.AllocationResult``.

:class:`AllocationResult` mirrors ``status.allocation`` of a ResourceClaim: ``devices`` (one
:class:`DeviceResult` per allocated device, in allocation order), ``config`` (class configs first,
then the claim's, as upstream orders them) and ``node_selector`` (a ``v1.NodeSelector`` dict, or None
when the devices are available everywhere). :meth:`AllocationResult.to_api` renders the API dict
(Go field names, a fresh copy), ready to be stored as the claim's ``status.allocation`` in an
assumed claim.

:class:`AllocationError` carries upstream's error text (``str(err)``); ``err.failed_on_node`` is True
for errors that upstream wraps with ``ErrFailedAllocationOnNode`` (the plugin turns those into an
Unschedulable status with that text), ``err.timed_out`` for the FilterTimeout deadline (the plugin
reports ``node <name>: timed out trying to allocate devices`` as an Error status). Any other error is
a broken claim or class: upstream returns it as an Error status with the text unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from extender.dra.records import DeviceToleration, Quantity

__all__ = ["AllocationError", "AllocationResult", "ConfigResult", "DeviceResult"]


class AllocationError(Exception):
    """An allocation that cannot proceed; ``str()`` is upstream's error text."""

    def __init__(self, message: str, *, failed_on_node: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.failed_on_node = failed_on_node
        self.timed_out = timed_out


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """One allocated device (``DeviceRequestAllocationResult``)."""

    request: str  # "req" or "req/subreq"
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] | None = None
    binding_failure_conditions: tuple[str, ...] | None = None
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] | None = None

    def to_api(self) -> dict[str, Any]:
        """The API dict, omitting empty optional fields as Go's ``omitempty`` does."""
        out: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool, "device": self.device}
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        if self.tolerations:
            out["tolerations"] = [copy.deepcopy(dict(t.raw)) for t in self.tolerations]
        if self.binding_conditions:
            out["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            out["bindingFailureConditions"] = list(self.binding_failure_conditions)
        if self.share_id is not None:
            out["shareID"] = self.share_id
        if self.consumed_capacity:
            out["consumedCapacity"] = {k: str(v) for k, v in self.consumed_capacity.items()}
        return out


@dataclass(frozen=True, slots=True)
class ConfigResult:
    """One ``DeviceAllocationConfiguration``: ``source`` is ``FromClass`` or ``FromClaim``."""

    source: str
    requests: tuple[str, ...]
    #: The configuration itself (the ``opaque`` member and anything else of the source config).
    raw: Mapping[str, Any]

    def to_api(self) -> dict[str, Any]:
        """The API dict (a copy: the class's or claim's configuration stays untouched)."""
        out: dict[str, Any] = {k: copy.deepcopy(v) for k, v in self.raw.items() if k != "requests"}
        out["source"] = self.source
        if self.requests:
            out["requests"] = list(self.requests)
        return out


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """The allocation of one claim (``resourceapi.AllocationResult``)."""

    devices: tuple[DeviceResult, ...]
    config: tuple[ConfigResult, ...] = ()
    node_selector: Mapping[str, Any] | None = field(default=None)

    def to_api(self) -> dict[str, Any]:
        """The API dict for ``status.allocation``."""
        devices: dict[str, Any] = {}
        if self.devices:
            devices["results"] = [d.to_api() for d in self.devices]
        if self.config:
            devices["config"] = [c.to_api() for c in self.config]
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector is not None:
            out["nodeSelector"] = copy.deepcopy(self.node_selector)
        return out
