"""From the floor benchmark's samples to its figures: medians, the floor set against
the program's targets (bench/design.py), and the aliased groups against the plain ones
pair by pair."""

from __future__ import annotations

from typing import Any

from bench.design import TARGETS
from bench.floor.design import ALIAS_PAIRS, FLEET_SIZE, PRODUCT, TRIAL_PATHS
from bench.levers.summary import paired_ratio
from bench.metrics import Samples

LIMITS = {t.key: t.limit for t in TARGETS}
FIGURES = ("s", "cpu_s", "program_cpu_s")  # wall, the whole tree's CPU, the program's


def preview_key(mode: str, figure: str) -> str:
    return f"preview_{mode.replace('-', '_')}_{figure}"


def vs_product_key(mode: str, figure: str) -> str:
    return f"{preview_key(mode, figure)}_vs_product"


def alias_cost_key(mode: str) -> str:
    """The program's CPU milliseconds per child that the aliases add to `mode`."""
    return f"alias_program_ms_per_child_{mode}"


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
    out: dict[str, Any] = {key: samples.median(key) for key in sorted(samples.values)}
    floor(out)
    for figure in FIGURES:
        for mode in TRIAL_PATHS:
            out[vs_product_key(mode, figure)] = paired_ratio(
                samples.values.get(preview_key(mode, figure)) or [],
                samples.values.get(preview_key(PRODUCT, figure)) or [])
    children = out.get("trial_children")
    for plain, aliased in ALIAS_PAIRS:
        got = [out.get(preview_key(m, "program_cpu_s")) for m in (plain, aliased)]
        if children and None not in got:
            out[alias_cost_key(plain)] = (got[1] - got[0]) * 1000 / children
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}
