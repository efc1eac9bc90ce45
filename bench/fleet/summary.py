"""From per-run samples to the figures of results.json: the median of every sample, each
set of Pulumi binaries' ratios to kubectl and the per-spoke figures derived from them, and
each target's verdict (on the headline set's figures)."""

from __future__ import annotations

import statistics
from typing import Any

from bench.fleet.design import BINARIES, GROWTH, HEADLINE, PROGRAM_SIZES, TARGETS, key_prefix
from bench.metrics import RssPeak, Samples, ratio, rounded

RSS_KINDS = ("total", "engine", "language_host", "program", "provider")


def median_peak(runs: list[RssPeak], kind: str) -> float | None:
    got = [r.get(kind) for r in runs if r]
    return statistics.median(got) if got else None


def _program(out: dict[str, Any]) -> None:
    small, big = PROGRAM_SIZES[0], PROGRAM_SIZES[-1]
    if out.get(f"program_ms_{big}") is None:
        return
    extra = big - small
    out["program_ms_per_spoke"] = (out[f"program_ms_{big}"] - out[f"program_ms_{small}"]) / extra
    out["program_plan_ms_per_spoke"] = (out[f"program_plan_ms_{big}"]
                                        - out[f"program_plan_ms_{small}"]) / extra
    out["program_resources_per_spoke"] = out[f"program_resources_{big}"] / big
    for lo, hi in zip(PROGRAM_SIZES, PROGRAM_SIZES[1:], strict=False):
        out[f"program_ms_per_spoke_{lo}_to_{hi}"] = \
            (out[f"program_ms_{hi}"] - out[f"program_ms_{lo}"]) / (hi - lo)
    out["program_ms_per_resource"] = out["program_ms_per_spoke"] \
        / out["program_resources_per_spoke"]


def _state(out: dict[str, Any]) -> None:
    state_n = max((n for n in GROWTH if out.get(f"state_bytes_{n}") is not None), default=0)
    if not state_n:
        return
    out["state_spokes"] = state_n
    for kind in ("", "compact_", "checkpoint_"):
        if out.get(f"state_{kind}bytes_{state_n}") is not None:
            out[f"state_{kind}bytes_per_spoke"] = out[f"state_{kind}bytes_{state_n}"] / state_n


def _rss(out: dict[str, Any], samples: Samples, spokes_for_rss: int) -> None:
    runs = samples.rss.get(f"growth_{spokes_for_rss}") or samples.rss.get("install") or []
    spokes = spokes_for_rss if samples.rss.get(f"growth_{spokes_for_rss}") else 1
    if not runs:
        return
    out["peak_rss_spokes"] = spokes
    for kind in RSS_KINDS:
        out[f"peak_rss_bytes_{kind}"] = median_peak(runs, kind)
    out["peak_rss_bytes_per_spoke"] = out["peak_rss_bytes_total"] / spokes
    one = samples.rss.get("growth_1")
    if spokes > 1 and one:
        out["peak_rss_bytes_per_extra_spoke"] = (
            (out["peak_rss_bytes_total"] - median_peak(one, "total")) / (spokes - 1))


def _spoke_cpu(out: dict[str, Any], p: str) -> None:
    """The spoke's control-plane CPU of both installs, as measured (the target's figure)
    and less what the idle control plane spends over each install's wall time: a slower
    install is charged for the cluster's own background work as well. `p`: the set's key
    prefix; its idle spoke is the one taken off kubectl's too."""
    fleet = out.get(f"{p}install_fleet_spoke_cpu_s")
    kubectl = out.get("install_kubectl_spoke_cpu_s")
    out[f"{p}install_spoke_cpu_ratio"] = ratio(fleet, kubectl)
    idle = out.get(f"{p}spoke_idle_core_pct")
    if idle is None or fleet is None or kubectl is None:
        return
    per_s = idle / 100
    out[f"{p}install_fleet_spoke_cpu_net_s"] = fleet - per_s * out[f"{p}install_fleet_s"]
    out[f"{p}install_kubectl_spoke_cpu_net_s"] = kubectl - per_s * out["install_kubectl_s"]
    out[f"{p}install_spoke_cpu_net_ratio"] = ratio(out[f"{p}install_fleet_spoke_cpu_net_s"],
                                                   out[f"{p}install_kubectl_spoke_cpu_net_s"])


def _against_kubectl(out: dict[str, Any], p: str) -> None:
    """One set's ratios to the kubectl baseline, under its key prefix `p`."""
    install_kubectl = out.get("install_kubectl_s")
    out[f"{p}install_ratio"] = ratio(out.get(f"{p}install_fleet_s"), install_kubectl)
    out[f"{p}install_checkpointed_ratio"] = ratio(out.get(f"{p}install_fleet_checkpointed_s"),
                                                  install_kubectl)
    _spoke_cpu(out, p)
    out[f"{p}noop_preview_ratio"] = ratio(out.get(f"{p}noop_preview_fleet_s"),
                                          out.get("noop_diff_kubectl_s"))
    out[f"{p}install_defaults_ratio"] = ratio(out.get(f"{p}install_fleet_defaults_s"),
                                              install_kubectl)
    out[f"{p}noop_preview_defaults_ratio"] = ratio(out.get(f"{p}noop_preview_fleet_defaults_s"),
                                                   out.get("noop_diff_kubectl_s"))
    out[f"{p}destroy_ratio"] = ratio(out.get(f"{p}destroy_fleet_s"),
                                     out.get("destroy_kubectl_s"))


def measured_prefixes(out: dict[str, Any]) -> list[str]:
    """The key prefix of each set to give ratios for: the headline set's always (its
    targets say n/a when it was not measured), another's when it has figures."""
    others = [key_prefix(b) for b in BINARIES if b != HEADLINE]
    return [key_prefix(HEADLINE), *(p for p in others if any(k.startswith(p) for k in out))]


def summarise(samples: Samples, spokes_for_rss: int) -> dict[str, Any]:
    """Medians of every sample, and the derived ratios and per-spoke figures."""
    out = samples.medians()
    for prefix in measured_prefixes(out):
        _against_kubectl(out, prefix)
    out["growth_4_vs_1"] = ratio(out.get("growth_install_4_s"), out.get("growth_install_1_s"))
    out["growth_preview_4_vs_1"] = ratio(out.get("growth_preview_4_s"),
                                         out.get("growth_preview_1_s"))
    out["growth_destroy_4_vs_1"] = ratio(out.get("growth_destroy_4_s"),
                                         out.get("growth_destroy_1_s"))
    _program(out)
    _state(out)
    _rss(out, samples, spokes_for_rss)
    for key, values in samples.flags.items():
        out[key] = values[0] if len(set(values)) == 1 else ",".join(str(v) for v in values)
    for target in TARGETS:
        out[f"target_{target.key}"] = target.verdict(out.get(target.key))
    return rounded(out)
