"""Nodes as a caller sent them in a NodeList (extenders registered without nodeCacheCapable).

kube-scheduler then sends every candidate Node in full, from its own informer cache: at 5000 nodes that
is about 11 MB of JSON per request, nearly all of it the same objects our own cache already holds. A
SentNode is one such item kept as the JSON text it arrived as, with only its name and resourceVersion
read up front. The engine takes the cache's copy when the versions match (the apiserver gives an
object a new resourceVersion on every change) and decodes the text only otherwise; the filter answer
echoes the passing items' text unchanged. So a request never builds Python objects for nodes it already
knows, and what goes back is byte for byte what came in.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson


class SentNodeError(ValueError):
    """A sent Node's text cannot be decoded."""


class _Metadata(msgspec.Struct):
    name: Any = None
    resourceVersion: Any = None


class _Head(msgspec.Struct):
    metadata: _Metadata | None = None


# Decodes only ``metadata.name`` and ``metadata.resourceVersion``; the scan skips everything else without
# building anything.
_HEAD = msgspec.json.Decoder(_Head)


class SentNode:
    """One NodeList item: its name and resourceVersion (None when absent or not strings), and the object,
    decoded from the sent text only when asked for."""

    __slots__ = ("_object", "_text", "name", "resource_version")

    def __init__(self, name: Any, resource_version: Any, text: msgspec.Raw | None, obj: Any) -> None:
        self.name = name if isinstance(name, str) else None
        self.resource_version = resource_version if isinstance(resource_version, str) else None
        self._text = text
        self._object = obj

    @classmethod
    def of_object(cls, obj: Any) -> SentNode:
        """An item already decoded (a body that had to be decoded in full)."""
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not isinstance(meta, dict):
            return cls(None, None, None, obj)
        return cls(meta.get("name"), meta.get("resourceVersion"), None, obj)

    @classmethod
    def of_text(cls, text: msgspec.Raw) -> SentNode:
        """An item as JSON text, already known to be well-formed (scanned with its NodeList)."""
        try:
            meta = _HEAD.decode(text).metadata
        except msgspec.DecodeError:
            meta = None  # not an object, or its metadata not one: whoever reads the object reports it
        if meta is None:
            return cls(None, None, text, _UNDECODED)
        return cls(meta.name, meta.resourceVersion, text, _UNDECODED)

    @property
    def object(self) -> Any:
        """The item as a decoded JSON value (decoded on first use). Raises :class:`SentNodeError` when the
        text, well-formed for the scan, is no JSON the decoder takes (a number past a double's range)."""
        if self._object is _UNDECODED:
            assert self._text is not None
            try:
                self._object = orjson.loads(memoryview(self._text))
            except orjson.JSONDecodeError as err:
                raise SentNodeError(f"invalid JSON: {err}") from None
        return self._object

    def echo(self) -> Any:
        """The item as it goes back in an answer: the sent text itself when there is one."""
        return orjson.Fragment(bytes(self._text)) if self._text is not None else self._object


_UNDECODED: Any = object()
