"""Garbage-collector settings for a process that holds a large, long-lived cluster model.

Two effects hurt with CPython's defaults once 150k pods are cached:

- a full collection scans every tracked object: the cached records would be rescanned again and again;
- collections are triggered by allocation counts (700 by default), and decoding one 11 MB NodeList or a
  page of pods allocates hundreds of thousands of objects, so a request can pay for several collections.

The initial list from an apiserver suffers from the second at scale: with the default thresholds, the
collections triggered while pages of pods are decoded and turned into records took more time than the
decoding and the records themselves (30k pods: 8 s of CPU to sync with them, under 4 s without). So the
thresholds are raised before the load (young collections per 100k allocations); after it, what exists is
collected once and frozen (moved out of the collector's reach: it lives as long as the process or is
dropped by reference counting). Freezing each page as it arrives instead was measured too: it also
froze the cyclic garbage of the HTTP client around each page (about 3 kB per pod never freed) and saved
no time. Reference counting still frees almost everything at once; the collector is only needed for
cycles, which the cache does not create.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000
THRESHOLDS = (YOUNG_THRESHOLD, 50, 100)


def prepare_for_load() -> None:
    """Before a large load: collect what start-up left, and raise the collection thresholds (idempotent)."""
    gc.collect()
    gc.set_threshold(*THRESHOLDS)


def settle_after_load() -> None:
    """Freeze the objects loaded so far and raise the collection thresholds (idempotent)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
