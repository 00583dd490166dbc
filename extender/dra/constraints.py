"""Claim constraints (upstream ``incubating/constraint.go`` and the match constraint of the allocator).

``matchAttribute``: every device of the named requests (all requests when none are named) has the
same value of the attribute. ``distinctAttribute``: no two of them share a value. A device without the
attribute violates either. ``add`` is called when a device is about to be allocated and ``remove``
when the search backtracks over it; the constraints are assumed monotonic, so the search stops a
branch at the first violation.
"""

from __future__ import annotations

from extender.dra.records import Attribute, DeviceRecord

__all__ = ["Constraint", "DistinctAttribute", "MatchAttribute", "lookup_attribute"]


class _AttributeConstraint:
    """What both constraints share: the requests they name (all when none) and the attribute."""

    __slots__ = ("attribute", "num_devices", "requests")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.num_devices = 0

    def applies(self, request: str, sub_request: str) -> bool:
        """Whether a device for this request (or its subrequest, named "request/sub") is constrained."""
        if not self.requests:
            return True
        if not sub_request:
            return request in self.requests
        return request in self.requests or f"{request}/{sub_request}" in self.requests

    def add(self, request: str, sub_request: str, device: DeviceRecord, driver: str) -> bool:
        """Take the device if the constraint still holds with it (a device it does not apply to always is)."""
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num_devices > 0 and (not attr.scalar or not self._admits(attr)):
            return False
        self._remember(request, attr)
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: DeviceRecord, driver: str) -> None:
        """Give a device back (the search backtracks over it)."""
        if self.applies(request, sub_request):
            self._forget(request)
            self.num_devices -= 1

    def _admits(self, attr: Attribute) -> bool:
        """Whether a further device's (typed) attribute keeps the constraint."""
        raise NotImplementedError

    def _remember(self, request: str, attr: Attribute) -> None:
        raise NotImplementedError

    def _forget(self, request: str) -> None:
        raise NotImplementedError


class MatchAttribute(_AttributeConstraint):
    """All devices of the named requests share one value of the attribute."""

    __slots__ = ("first",)

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.first: Attribute | None = None

    def _admits(self, attr: Attribute) -> bool:
        return self.first is not None and self.first.kind == attr.kind and self.first.value == attr.value

    def _remember(self, request: str, attr: Attribute) -> None:
        if self.num_devices == 0:
            self.first = attr

    def _forget(self, request: str) -> None:
        return None


class DistinctAttribute(_AttributeConstraint):
    """No two devices of the named requests share a value of the attribute.

    v0.36.3 remembers the values per request name, so a later device of the same request replaces the value
    remembered for the earlier one (two devices of one request are never compared) and giving one back forgets
    the request's value; v0.37.2 (``every_device``) remembers every device's value and gives back the last one.
    """

    __slots__ = ("every_device", "listed", "values")

    def __init__(self, requests: tuple[str, ...], attribute: str, *, every_device: bool = True) -> None:
        super().__init__(requests, attribute)
        self.every_device = every_device
        self.values: dict[str, Attribute] = {}
        self.listed: list[Attribute] = []

    def _admits(self, attr: Attribute) -> bool:
        held = self.listed if self.every_device else self.values.values()
        return all(other.kind != attr.kind or other.value != attr.value for other in held)

    def _remember(self, request: str, attr: Attribute) -> None:
        if self.every_device:
            self.listed.append(attr)
        else:
            self.values[request] = attr

    def _forget(self, request: str) -> None:
        if self.every_device:
            self.listed.pop()
        else:
            self.values.pop(request, None)


Constraint = MatchAttribute | DistinctAttribute


def lookup_attribute(device: DeviceRecord, driver: str, name: str) -> Attribute | None:
    """A fully qualified attribute; the driver's own domain may also be given without a domain."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, short = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(short)
