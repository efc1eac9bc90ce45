"""From the shard section's samples to its figures: medians, each figure per spoke, and
whether every no-op preview was clean."""

from __future__ import annotations

from typing import Any

from bench.metrics import Samples, rounded
from bench.shard.design import OPERATIONS, STATE


def per_spoke(value: float | None, spokes: int) -> float | None:
    return None if value is None else value / spokes


def derive(out: dict[str, Any], spokes: int) -> dict[str, Any]:
    """The per-spoke figures from the medians in `out` for a stack of `spokes`; also run
    on a stored shard-results.json (`--report-only`), as each comes from a median."""
    for op in OPERATIONS:
        out[f"{op}_cpu_per_spoke_s"] = per_spoke(out.get(f"{op}_cpu_s"), spokes)
        out[f"{op}_rss_per_spoke_bytes"] = per_spoke(out.get(f"{op}_rss_bytes"), spokes)
    for key in STATE:
        out[f"{key}_per_spoke"] = per_spoke(out.get(key), spokes)
    out["state_objects_per_spoke"] = per_spoke(out.get("state_objects"), spokes)
    out["pulumi_log_per_spoke_bytes"] = per_spoke(out.get("pulumi_log_bytes"), spokes)
    return rounded(out)


def summarise(samples: Samples, spokes: int) -> dict[str, Any]:
    """Medians of every sample, the per-spoke figures, and `preview_clean`: every no-op
    preview changed nothing (None when none ran)."""
    out = samples.medians()
    clean = samples.flags.get("preview_clean")
    out["preview_clean"] = all(clean) if clean else None
    return derive(out, spokes)
