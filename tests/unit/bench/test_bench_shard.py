"""The shard section's figures from samples: per spoke, the preview's verdict, the spoke
count it ran with, and a report that shows each figure and says when it is a quick
check."""

from __future__ import annotations

import pytest

from bench.metrics import Samples
from bench.section import Options
from bench.shard import report, stored
from bench.shard.design import KINDS, OPERATIONS, SPOKES, STATE
from bench.shard.measure import runs, spokes
from bench.shard.summary import summarise

MB = 1_000_000


def shard_samples(clean: bool = True) -> Samples:
    """One run of a stack: each operation's figures, the state, the log, the program."""
    samples = Samples()
    for op in OPERATIONS:
        samples.add(f"{op}_s", 100.0)
        samples.add(f"{op}_cpu_s", 400.0)
        samples.add(f"{op}_rss_bytes", 6_000 * MB)
        samples.add(f"{op}_machine_used_bytes", 12_000 * MB)
        for kind in KINDS:
            samples.add(f"{op}_cpu_{kind}_s", 100.0)
            samples.add(f"{op}_rss_{kind}_bytes", 1_500 * MB)
        samples.add(f"{op}_log_bytes", 1 * MB)
    for key in STATE:
        samples.add(key, 30 * MB)
    samples.add("state_objects", 4020)
    samples.add("pulumi_log_bytes", 4 * MB)
    samples.add("program_ms", 4000.0)
    samples.add("program_plan_ms", 40.0)
    samples.add("program_resources", 4300)
    samples.add("program_peak_rss_bytes", 300 * MB)
    samples.flags["preview_clean"].append(clean)
    return samples


def results(n: int = SPOKES, clean: bool = True) -> dict:
    return {"runs": 1, "spokes": n, "command": "python -m bench --section shard",
            "date": "today", "machine_load_start": "0", "machine_load_end": "0",
            **summarise(shard_samples(clean), n)}


def test_every_figure_per_spoke_divides_by_the_spokes_it_ran_with() -> None:
    out = summarise(shard_samples(), 20)
    assert out["install_cpu_per_spoke_s"] == pytest.approx(20.0)
    assert out["preview_rss_per_spoke_bytes"] == pytest.approx(300 * MB)
    assert out["state_compact_bytes_per_spoke"] == pytest.approx(1.5 * MB)
    assert out["state_objects_per_spoke"] == pytest.approx(201)
    assert summarise(shard_samples(), 2)["state_bytes_per_spoke"] == pytest.approx(15 * MB)


def test_the_preview_is_clean_only_when_every_run_was() -> None:
    assert summarise(shard_samples(clean=True), 20)["preview_clean"] is True
    samples = shard_samples(clean=True)
    samples.flags["preview_clean"].append(False)
    assert summarise(samples, 20)["preview_clean"] is False
    assert summarise(Samples(), 20)["preview_clean"] is None


def test_the_defaults_are_one_run_of_the_recommended_shard() -> None:
    assert (spokes(Options()), runs(Options())) == (SPOKES, 1) == (20, 1)
    assert (spokes(Options(shard_spokes=2)), runs(Options(runs=3))) == (2, 3)


def test_the_report_shows_every_table_and_the_spokes() -> None:
    text = report.markdown(results())
    assert text.startswith("## One stack of 20 spokes")
    assert "quick check" not in text
    for op in OPERATIONS:
        assert f"| {op} | 100.0 s | 400.0 s | 20.0 s |" in text
    for heading in ("### Peak memory", "### The state", "### The program under mocks",
                    "### Pulumi's log"):
        assert heading in text
    assert "(the preview clean: True)" in text
    assert "n/a" not in text.split("### Peak memory")[1]


def test_fewer_spokes_say_they_are_a_quick_check() -> None:
    for text in (report.markdown(results(2)), report.terminal(results(2))):
        assert "A quick check with 2 spoke(s)" in text


def test_a_stored_run_derives_the_same_figures_again() -> None:
    out = results()
    assert stored(out) == out  # --report-only
