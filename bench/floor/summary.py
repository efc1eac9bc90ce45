"""From the floor section's samples to its figures: medians, and the floor set against the
program's targets (bench/fleet/design.py)."""

from __future__ import annotations

from typing import Any

from bench.fleet.design import TARGETS
from bench.floor.design import FLEET_SIZE
from bench.metrics import Samples, rounded

LIMITS = {t.key: t.limit for t in TARGETS}


def floor(out: dict[str, Any]) -> None:
    """The floor per resource and per extra spoke, and what fits the 50 ms target."""
    per_spoke = out.get("resources_per_spoke")
    one, fleet = out.get("floor_ms_1"), out.get(f"floor_ms_{FLEET_SIZE}")
    if not per_spoke or one is None or fleet is None:
        return
    out["floor_ms_per_resource_1"] = one / per_spoke
    out[f"floor_ms_per_resource_{FLEET_SIZE}"] = fleet / (per_spoke * FLEET_SIZE)
    out["floor_ms_per_spoke"] = (fleet - one) / (FLEET_SIZE - 1)
    out["floor_resources_per_spoke_within_target"] = int(
        LIMITS["program_ms_per_spoke"] * per_spoke / out["floor_ms_per_spoke"])
    out["floor_vs_target_per_spoke"] = out["floor_ms_per_spoke"] / \
        LIMITS["program_ms_per_spoke"]
    out[f"floor_vs_target_time_{FLEET_SIZE}"] = fleet / LIMITS["program_ms_100"]
    rss = out.get(f"floor_peak_rss_bytes_{FLEET_SIZE}")
    if rss is not None:
        out[f"floor_vs_target_rss_{FLEET_SIZE}"] = rss / LIMITS["program_peak_rss_bytes_100"]


def summarise(samples: Samples) -> dict[str, Any]:
    out = samples.medians()
    floor(out)
    return rounded(out)
