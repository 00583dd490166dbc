"""Garbage-collector settings for a process that holds a large, long-lived cluster model.

Two effects hurt with CPython's defaults once 150k pods are cached:

- a full collection scans every tracked object: the cached records would be rescanned again and again;
- collections are triggered by allocation counts (700 by default), and decoding one 11 MB NodeList or a
  page of pods allocates hundreds of thousands of objects, so a request can pay for several collections.

The initial list from an apiserver suffers from both at scale. With the default thresholds, the collections
triggered while pages of pods are decoded and turned into records took more time than the decoding and
the records themselves (30k pods: 8 s of CPU to sync with them, under 4 s without); with raised thresholds
alone, the middle-generation collections during the load and the full collection after it still rescan
everything loaded (150k pods: 5 to 6 s for that last collection alone, on a busy 2-core machine). So:
before the load, what start-up left is collected, frozen, and the thresholds are raised (young collections
per 100k allocations); each page is frozen as soon as it is in the cache (moved out of the collector's
reach: it lives as long as the process or is dropped by reference counting), so no collection ever scans
it; after the load, what is left is collected (little) and frozen. Reference counting still frees almost
everything at once; the collector is only needed for cycles, which the cache does not create. (A freeze
also keeps whatever cyclic garbage exists at that moment: the list bodies are therefore never held by a
cycle, see KubeClient._get_body; with them, freezing each page kept about 3 kB per pod.)
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 100_000
THRESHOLDS = (YOUNG_THRESHOLD, 50, 100)


def prepare_for_load() -> None:
    """Before a large load: collect and freeze what start-up left, and raise the collection thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def keep_loaded() -> None:
    """During a large load, once a part of it is in the cache: freeze it, so that no collection rescans it."""
    gc.freeze()


def settle_after_load() -> None:
    """Freeze the objects loaded so far and raise the collection thresholds (idempotent)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
