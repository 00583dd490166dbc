"""Mapping the engine's weighted totals to the extender's 0..10 answer.

Internally every plugin scores 0..100 (MaxNodeScore) and the profile sums ``score × weight``, so a
node's total lies in 0..100×W, W being the sum of the weights of the score plugins that ran for this
pod (a plugin whose PreScore skips, e.g. NodeAffinity for a pod without preferences, adds nothing
upstream and is left out of W, so that skips do not compress every answer). kube-scheduler then
multiplies our 0..10 answer by the extender's weight and by 10 (MaxNodeScore / MaxExtenderPriority).

- ``absolute`` (default): the weighted mean ``total / W`` (0..100) divided by 10 and rounded half up
  (for the 0-10 era profile, whose plugins score 0..10, the weighted mean itself, rounded half up).
  A node's answer depends on that node alone, so answers are stable across requests.
- ``minmax``: the candidates' totals stretched over 0..10 (lowest 0, highest 10, rounded half up), which
  uses the full range when all candidates score close together. Equal totals all answer 0.

Either way the answer is an integer in 0..10: never out of range, because kube-scheduler does not clamp.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.engine.framework import MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE

# Totals of a request: a list, or the runtime's int64 array (mapped without a per-node Python step).
Totals = Sequence[int] | np.ndarray


def absolute(totals: Totals, total_weight: int, max_score: int = MAX_NODE_SCORE) -> list[int]:
    """Weighted mean on 0..max_score, scaled to 0..10, rounded half up."""
    values = np.asarray(totals, np.int64)
    if total_weight <= 0:
        return [0] * len(values)
    scale = max_score * total_weight  # a total equal to scale maps to MAX_EXTENDER_PRIORITY
    mapped: list[int] = _clamp((2 * values * MAX_EXTENDER_PRIORITY + scale) // (2 * scale)).tolist()
    return mapped


def minmax(totals: Totals) -> list[int]:
    """Totals stretched so the lowest maps to 0 and the highest to 10, rounded half up."""
    values = np.asarray(totals, np.int64)
    if not len(values):
        return []
    low, high = int(values.min()), int(values.max())
    span = high - low
    if span == 0:
        return [0] * len(values)
    mapped: list[int] = _clamp((2 * (values - low) * MAX_EXTENDER_PRIORITY + span) // (2 * span)).tolist()
    return mapped


def map_scores(totals: Totals, total_weight: int, mode: str, max_score: int = MAX_NODE_SCORE) -> list[int]:
    """Apply the named mapping (``absolute`` or ``minmax``); max_score is the plugins' scale (100 or 10)."""
    if mode == "minmax":
        return minmax(totals)
    return absolute(totals, total_weight, max_score)


def _clamp(scores: np.ndarray) -> np.ndarray:
    # The answer must stay in 0..10 whatever the totals (numpy's // floors, as Python's).
    clamped: np.ndarray = np.minimum(np.maximum(scores, 0), MAX_EXTENDER_PRIORITY)  # np.clip costs 4x as much
    return clamped
