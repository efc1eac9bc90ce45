"""From the cost section's samples to its figures: medians, CPU per spoke and per extra
spoke, the runner's shards against one stack, each setting against the defaults, and
each target's verdict."""

from __future__ import annotations

from typing import Any

from bench.cost.design import ONE_STACK, OPERATIONS, SHARDINGS, TARGETS, VARIANT_SPOKES, VARIANTS
from bench.metrics import Samples, ratio, rounded


def _one_stack(out: dict[str, Any]) -> None:
    small, big = ONE_STACK[0], ONE_STACK[-1]
    for op in OPERATIONS:
        for n in ONE_STACK:
            cpu = out.get(f"one_{n}_{op}_cpu_s")
            out[f"one_{n}_{op}_cpu_per_spoke_s"] = None if cpu is None else cpu / n
        first, last = out.get(f"one_{small}_{op}_cpu_s"), out.get(f"one_{big}_{op}_cpu_s")
        if first is None or last is None:
            continue
        extra = (last - first) / (big - small)
        out[f"one_{op}_cpu_per_extra_spoke_s"] = extra
        out[f"one_{op}_extra_vs_single"] = ratio(extra, first)
    rss_small, rss_big = out.get(f"one_{small}_install_rss_bytes"), \
        out.get(f"one_{big}_install_rss_bytes")
    if rss_small is not None and rss_big is not None:
        out["one_install_rss_per_extra_spoke_bytes"] = (rss_big - rss_small) / (big - small)


def _shards(out: dict[str, Any]) -> None:
    for sharding in SHARDINGS:
        for op in OPERATIONS:
            prefix = f"shards_{sharding.key}_{op}"
            cpu = out.get(f"{prefix}_cpu_s")
            out[f"{prefix}_cpu_per_spoke_s"] = None if cpu is None else cpu / sharding.total
            if sharding.total in ONE_STACK:
                one = f"one_{sharding.total}_{op}"
                out[f"{prefix}_cpu_vs_one_stack"] = ratio(cpu, out.get(f"{one}_cpu_s"))
                out[f"{prefix}_s_vs_one_stack"] = ratio(out.get(f"{prefix}_s"),
                                                        out.get(f"{one}_s"))
                out[f"{prefix}_rss_vs_one_stack"] = ratio(out.get(f"{prefix}_rss_bytes"),
                                                          out.get(f"{one}_rss_bytes"))


def _machine_peaks(out: dict[str, Any]) -> None:
    """Each sharding's most machine memory in use over its three operations: the
    memory target holds for the whole fleet run, not for its install alone."""
    for sharding in SHARDINGS:
        used = [out.get(f"shards_{sharding.key}_{op}_machine_used_bytes") for op in OPERATIONS]
        known = [u for u in used if u is not None]
        if known:
            out[f"shards_{sharding.key}_machine_used_peak_bytes"] = max(known)


def _variants(out: dict[str, Any]) -> None:
    for variant in VARIANTS:
        for op in OPERATIONS:
            base, mine = f"one_{VARIANT_SPOKES}_{op}", f"variant_{variant.key}_{op}"
            for figure in ("s", "cpu_s", "rss_bytes"):
                out[f"{mine}_{figure}_vs_default"] = ratio(out.get(f"{mine}_{figure}"),
                                                           out.get(f"{base}_{figure}"))


def derive(out: dict[str, Any]) -> dict[str, Any]:
    """The derived figures and the targets' verdicts from the medians in `out`; also run
    on a stored cost-results.json (`--report-only`), as every derived figure comes from
    medians."""
    _one_stack(out)
    _shards(out)
    _machine_peaks(out)
    _variants(out)
    for target in TARGETS:
        out[f"target_{target.key}"] = target.verdict(out.get(target.key))
    return rounded(out)


def summarise(samples: Samples) -> dict[str, Any]:
    """Medians of every sample, the derived figures, and the targets' verdicts."""
    return derive(samples.medians())
