"""Garbage-collector settings for a process that holds a large, long-lived cluster model.

Two effects hurt tail latency with CPython's defaults once 150k pods are cached:

- a full collection scans every tracked object: the cached records would be rescanned again and again;
- collections are triggered by allocation counts (700 by default), and decoding one 11 MB NodeList or a
  page of pods allocates hundreds of thousands of objects, so a request can pay for several collections.

After the initial load we therefore freeze what exists (moved out of the collector's reach: it lives as
long as the process or is dropped by reference counting), and raise the thresholds so that young
collections run per 100k allocations. Reference counting still frees almost everything at once; the
collector is only needed for cycles, which the cache does not create.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000


def settle_after_load() -> None:
    """Freeze the objects loaded so far and raise the collection thresholds (idempotent)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 50, 100)
