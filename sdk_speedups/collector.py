"""Python's cyclic garbage collector, set for a program that only grows.

The program builds one long-lived Python resource, its Outputs and futures for every
object of every spoke, and keeps them all until it ends; little of it is garbage. With
Python's default thresholds (a young collection every 700 net allocations, an older one
every 10 of those) the collector walks that growing heap again and again: under mocks
it was half of the time of 23,700 resources with no inputs (`python -m bench --floor-child N`:
23.5 s, 11.5 s with the collector off). A young collection every 100,000 allocations
keeps what the collector frees for cycles (asyncio's futures and tracebacks) without the
walks: docs/performance.md ("Engine and provider settings") has the measured effect.
`KNATIVE_FLEET_GC=python` keeps Python's thresholds (core/settings.py).
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

from core.settings import settings

GC_ENV = "KNATIVE_FLEET_GC"
KEEP_PYTHON = "python"
YOUNG_THRESHOLD = 100_000  # Python's is 700; the older generations keep their ratios


def use_program_gc(environ: Mapping[str, str] | None = None) -> bool:
    """Raises the young generation's threshold unless `KNATIVE_FLEET_GC=python`; True if
    it did."""
    if settings(environ).gc == KEEP_PYTHON:
        return False
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    return True
