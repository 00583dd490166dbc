"""Compiled once per pod template: what a plugin makes of a part of a pod's spec, shared by its replicas.

The replicas of one template carry the same nodeSelector, node affinity and topology spread constraints, and
filter, prioritize and the plugins that read them (NodeAffinity, PodTopologySpread's node inclusion and
constraints) all ask for the compiled form. A :class:`TemplateMemo` compiles each distinct text of such a
part once: the result is shared between records (compiled selectors and constraints are immutable) and each
record keeps the one it uses in its own memo, so that a plugin asking node by node compiles nothing again.

The key is the JSON text of exactly what compiling reads (the caller names it), so two pods whose parts differ
in anything compiling looks at never share a result. The memo of templates is bounded in bytes and entries:
requests send any text. A part that does not compile raises on every call: the record keeps a copy of its
error without a traceback (no frames of the failed call are held), the memo of templates keeps nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from extender.cluster.records import PodRecord
from extender.memo import BoundedMemo

__all__ = ["TemplateMemo"]

T = TypeVar("T")


class _Refused:
    """A record's remembered compile error: a copy of the exception, raised afresh on every call."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = copy.copy(error)  # a copy holds no traceback, cause or context: no frames are kept


class TemplateMemo:
    """Compiled parts of pod templates, keyed by their JSON text, ``max_bytes`` and ``max_entries`` at most.

    ``weight``: how many times its JSON text a compiled result weighs in memory (an estimate; the bound in
    bytes is the memo's weight total). ``errors``: the exceptions compiling raises for a malformed part.
    """

    __slots__ = ("_errors", "_memo", "_weight")

    def __init__(self, name: str, *, max_bytes: int, max_entries: int, weight: int,
                 errors: tuple[type[Exception], ...]) -> None:
        self._memo: BoundedMemo[bytes, Any] = BoundedMemo(name, max_bytes=max_bytes, max_entries=max_entries)
        self._weight = weight
        self._errors = errors

    def __len__(self) -> int:
        return len(self._memo)

    def compiled(self, pod: PodRecord, memo_key: str, source: Callable[[], Any], compile_it: Callable[[], T]) -> T:
        """What ``compile_it`` makes of the part of ``pod`` that ``source`` returns (all that ``compile_it``
        reads), through the record's memo under ``memo_key`` and then the memo of templates. ``source`` is only
        called when the record holds nothing yet: a plugin asking node by node pays one lookup."""
        held = pod.memo.get(memo_key)
        if isinstance(held, _Refused):
            raise copy.copy(held.error)
        if held is not None:
            return held  # type: ignore[no-any-return]  # what compile_it made for this record
        try:
            text = memo_key.encode() + orjson.dumps(source())
        except TypeError:  # something JSON cannot hold: compiled for this record alone
            text = b""
        shared: T | None = self._memo.get(text) if text else None
        if shared is None:
            try:
                shared = compile_it()
            except self._errors as err:
                pod.memo[memo_key] = _Refused(err)
                raise
            if text:
                self._memo.put(text, shared, self._weight * len(text))
        pod.memo[memo_key] = shared
        return shared
