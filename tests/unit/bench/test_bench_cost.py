"""The cost section's figures from samples: CPU per spoke and per extra spoke, the
runner's shards against one stack, the settings against the defaults, the targets'
verdicts, and a report that shows each of them."""

from __future__ import annotations

import pytest

from bench.cost import report, stored
from bench.cost.design import ONE_STACK, OPERATIONS, SHARDINGS, TARGETS, VARIANT_SPOKES, VARIANTS
from bench.cost.measure import pulumi_side
from bench.cost.summary import derive, summarise
from bench.metrics import Samples, Target

MB = 1_000_000


def fleet_samples(cpu_first: float = 10.0, cpu_extra: float = 11.0,
                  rss_first: float = 600 * MB, rss_extra: float = 140 * MB) -> Samples:
    """One run: CPU and memory grow linearly with spokes from the given first/extra."""
    samples = Samples()
    for n in ONE_STACK:
        for op in OPERATIONS:
            samples.add(f"one_{n}_{op}_cpu_s", cpu_first + cpu_extra * (n - 1))
            samples.add(f"one_{n}_{op}_s", 20.0 * n)
            samples.add(f"one_{n}_{op}_rss_bytes", rss_first + rss_extra * (n - 1))
    for sharding in SHARDINGS:
        for op in OPERATIONS:
            prefix = f"shards_{sharding.key}_{op}"
            samples.add(f"{prefix}_cpu_s", 12.0 * sharding.total)
            samples.add(f"{prefix}_s", 15.0 * sharding.total)
            samples.add(f"{prefix}_rss_bytes", 500 * MB * sharding.total)
            samples.add(f"{prefix}_busy_pct", 90.0)
            samples.add(f"{prefix}_machine_used_bytes", 8_000 * MB)
    for variant in VARIANTS:
        for op in OPERATIONS:
            samples.add(f"variant_{variant.key}_{op}_s", 40.0 * VARIANT_SPOKES)
            samples.add(f"variant_{variant.key}_{op}_cpu_s", 5.0)
            samples.add(f"variant_{variant.key}_{op}_rss_bytes", 300 * MB)
    return samples


def test_cpu_per_extra_spoke_against_a_single_spoke() -> None:
    out = summarise(fleet_samples(cpu_first=10.0, cpu_extra=11.0))
    for op in OPERATIONS:
        assert out[f"one_{op}_cpu_per_extra_spoke_s"] == pytest.approx(11.0)
        assert out[f"one_{op}_extra_vs_single"] == pytest.approx(1.1)
        assert out[f"target_one_{op}_extra_vs_single"] == "PASS"
    assert out["one_8_install_cpu_per_spoke_s"] == pytest.approx((10 + 77) / 8, abs=1e-3)
    worse = summarise(fleet_samples(cpu_first=10.0, cpu_extra=13.0))
    assert worse["target_one_install_extra_vs_single"] == "MISS"


def test_memory_per_extra_spoke() -> None:
    assert summarise(fleet_samples(rss_extra=140 * MB))[
        "target_one_install_rss_per_extra_spoke_bytes"] == "PASS"
    out = summarise(fleet_samples(rss_extra=200 * MB))
    assert out["one_install_rss_per_extra_spoke_bytes"] == pytest.approx(200 * MB)
    assert out["target_one_install_rss_per_extra_spoke_bytes"] == "MISS"


def test_shards_against_one_stack_of_the_same_spokes() -> None:
    out = summarise(fleet_samples(cpu_first=10.0, cpu_extra=11.0))
    # 2x4 = 96 CPU seconds against one stack of 8 = 10 + 77
    assert out["shards_2x4_install_cpu_vs_one_stack"] == pytest.approx(96 / 87, abs=1e-3)
    assert out["shards_2x4_install_s_vs_one_stack"] == pytest.approx(120 / 160)
    assert "shards_4x4_install_cpu_vs_one_stack" not in out  # 16 is not measured as one
    assert out["target_shards_4x4_install_busy_pct"] == "PASS"  # at least 85


def test_variants_against_the_defaults() -> None:
    out = summarise(fleet_samples())
    first = VARIANTS[0].key
    assert out[f"variant_{first}_install_s_vs_default"] == pytest.approx(160 / 80)


def test_a_figure_not_measured_has_no_verdict() -> None:
    assert summarise(Samples())["target_one_install_extra_vs_single"] is None
    assert Target("x", "x", 85.0, at_least=True).verdict(84.9) == "MISS"
    assert Target("x", "x", 85.0, at_least=True).verdict(85.0) == "PASS"


def test_the_runner_is_not_the_pulumi_side() -> None:
    assert pulumi_side({"total": 10.0, "runner": 1.5, "engine": 8.5}) == 8.5


def test_the_report_shows_every_target_and_table() -> None:
    results = {"runs": 1, "command": "python -m bench --section cost", "date": "today",
               "machine_load_start": "0", "machine_load_end": "0",
               **summarise(fleet_samples())}
    text = report.markdown(results)
    for target in TARGETS:
        assert f"`{target.key}`" in text
    for heading in ("### One stack", "### Per extra spoke", "### Shards through the fleet "
                    "runner", "### Engine and provider settings"):
        assert heading in text
    for variant in VARIANTS:
        assert f"| {variant.name} | install |" in text


def test_shardings_and_variants_are_distinct() -> None:
    assert len({s.key for s in SHARDINGS}) == len(SHARDINGS)
    assert len({v.key for v in VARIANTS}) == len(VARIANTS)
    assert VARIANT_SPOKES in ONE_STACK  # the defaults' row is measured


def test_the_fleet_memory_target_reads_the_most_of_its_three_operations() -> None:
    samples = Samples()
    for op, gb in zip(OPERATIONS, (12.9, 11.0, 14.2), strict=True):
        samples.add(f"shards_4x4_{op}_machine_used_bytes", gb * 1000 * MB)
    out = summarise(samples)
    assert out["shards_4x4_machine_used_peak_bytes"] == 14.2 * 1000 * MB
    assert out["target_shards_4x4_machine_used_peak_bytes"] is not None


def test_a_stored_run_derives_the_same_figures_again() -> None:
    out = summarise(fleet_samples())
    medians = {k: v for k, v in out.items() if not k.startswith("target_")}
    assert derive(medians) == out
    assert stored(out) == out  # --report-only
