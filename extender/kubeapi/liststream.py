"""Cutting one large list response into parts that decode on their own, as its bytes arrive.

An informer's first list is served from the apiserver's watch cache (resourceVersion=0), whole, in one
response: 150k pods are half a gigabyte of JSON. Rather than holding all of it and decoding it at once
(after the last byte), the response is cut as it streams in, between two items, into documents of a few
megabytes that each decode alone: the list's head (``{"kind":..,"metadata":{..},"items":[]}``), then
``{"items":[item,...]}`` parts. Decoding one part overlaps with the apiserver encoding the next.

Where to cut: the apiserver writes the items as ``...},{"metadata":...``. Those bytes can only be
structural (a ``"`` inside a JSON string is escaped), so every such place is either the boundary between
two items or between two elements of an array nested in an item whose elements start with ``metadata``.
Lists of kinds with no such nested array (Pods) are only ever cut between items; and a cut in the wrong
place would leave a part with an unclosed bracket, which does not decode: the caller then joins that part
with the next one (:func:`join`) and decodes again, so a wrong cut costs time, never a wrong result.
"""

from __future__ import annotations

from dataclasses import dataclass

ITEMS_OPEN = b'"items":['
BOUNDARY = b'},{"metadata":'


@dataclass(frozen=True)
class Part:
    """A run of whole items (``last`` False) or the end of the list (``last``: its closing brackets too)."""

    data: bytes
    last: bool = False

    def document(self) -> bytes:
        """The part as a JSON object with an ``items`` array."""
        return b'{"items":[' + self.data + (b"" if self.last else b"]}")


def join(first: Part, second: Part) -> Part:
    """Two consecutive parts as one (after a cut that turned out to be inside an item)."""
    return Part(first.data + b"," + second.data, second.last)


class ListSplitter:
    """Feed the bytes of a list response; take the head once, then parts of about ``part_bytes``."""

    def __init__(self, part_bytes: int = 4 << 20) -> None:
        self.part_bytes = part_bytes
        self._buffer = bytearray()
        self._head_found = False
        self.head: bytes | None = None  # the list without items, once its start has arrived

    def feed(self, chunk: bytes) -> list[Part]:
        """Take more bytes; returns the parts they complete."""
        self._buffer += chunk
        if not self._head_found:
            at = self._buffer.find(ITEMS_OPEN)
            if at < 0:
                return []
            end = at + len(ITEMS_OPEN)
            self.head = bytes(self._buffer[:end]) + b"]}"
            del self._buffer[:end]
            self._head_found = True
        if len(self._buffer) < self.part_bytes:
            return []
        cut = self._buffer.rfind(BOUNDARY)  # the last one: what follows is less than an item
        if cut < 0:
            return []  # one item larger than a part so far: wait for its end
        part = Part(bytes(self._buffer[:cut + 1]))
        del self._buffer[:cut + 2]  # the closing brace stays with the part, the comma goes
        return [part]

    def finish(self) -> tuple[bytes | None, Part | None]:
        """At the end of the response: (the whole body if no items array was ever found, the last part)."""
        if not self._head_found:
            return bytes(self._buffer), None
        return None, Part(bytes(self._buffer), last=True)
