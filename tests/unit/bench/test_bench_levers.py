"""The levers section's figures from samples: each setting against the defaults pair by
pair, and a report that shows every setting and operation and keeps other sections."""

from __future__ import annotations

from pathlib import Path

from bench.cost.design import OPERATIONS
from bench.levers import report
from bench.levers.design import FIGURES, REPORTED
from bench.levers.summary import default_key, lever_key, paired_ratio, summarise
from bench.metrics import Samples
from bench.report import replace_section, write


def paired_samples(default: list[float], lever: list[float]) -> Samples:
    samples = Samples()
    for op in OPERATIONS:
        for figure in FIGURES:
            for value in default:
                samples.add(default_key(op, figure), value)
            for value in lever:
                samples.add(lever_key(REPORTED[0].key, op, figure), value)
    return samples


def test_the_ratio_is_the_median_of_the_pairs_ratios() -> None:
    # The machine slows down over the run: each pair is 0.5x, the medians' ratio is not.
    assert paired_ratio([5.0, 10.0, 40.0], [10.0, 20.0, 80.0]) == 0.5
    assert paired_ratio([], []) is None
    assert paired_ratio([1.0], [0.0]) is None


def test_summary_gives_each_setting_against_the_defaults() -> None:
    out = summarise(paired_samples([10.0, 12.0, 30.0], [8.0, 9.0, 24.0]))
    key = lever_key(REPORTED[0].key, "install", "s")
    assert out[default_key("install", "s")] == 12.0
    assert out[key] == 9.0
    assert out[f"{key}_vs_default"] == 0.8


def test_report_has_a_row_per_setting_and_operation_and_keeps_other_sections(
        tmp_path: Path) -> None:
    results = {"command": "python -m bench --section levers", "date": "2026-11-25 00:00 UTC",
               "pairs": 3,
               "machine_load_start": [0.5, 0.5, 0.5], "machine_load_end": [1, 1, 1],
               **summarise(paired_samples([10.0, 11.0, 12.0], [5.0, 5.5, 6.0]))}
    rows = report.table(results)
    assert len(rows) == 2 + len(OPERATIONS) * (1 + len(REPORTED))
    assert any(REPORTED[0].name in row and "0.50x / 0.50x / 0.50x" in row for row in rows)
    md = tmp_path / "performance.md"
    md.write_text(replace_section("# Benchmarks\n", "cost-per-spoke", "kept"))
    write(results, report.markdown(results), "levers", tmp_path / "levers-results.json", md)
    text = md.read_text()
    assert "kept" in text and "## Levers" in text and REPORTED[0].name in text
