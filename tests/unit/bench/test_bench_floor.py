"""The floor section: its figures set against the program's targets, its report, and its
child's registration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.floor import report
from bench.floor.design import FIGURES, FLEET_SIZE, preview_key
from bench.floor.summary import summarise
from bench.metrics import Samples
from bench.program import FLOOR_FLAG
from bench.report import replace_section, write


def samples(per_spoke: int = 200, one_ms: float = 100.0, fleet_ms: float = 20_000.0,
            rss: float = 800e6) -> Samples:
    s = Samples()
    s.add("resources_per_spoke", per_spoke)
    s.add("floor_ms_1", one_ms)
    s.add(f"floor_ms_{FLEET_SIZE}", fleet_ms)
    s.add(f"floor_peak_rss_bytes_{FLEET_SIZE}", rss)
    for value in (8.0, 8.0, 12.0):  # the product's no-op previews
        for figure in FIGURES:
            s.add(preview_key(figure), value)
    return s


def test_the_floor_is_set_against_each_program_target() -> None:
    out = summarise(samples())
    assert out["floor_ms_per_resource_1"] == 0.5
    assert out[f"floor_ms_per_resource_{FLEET_SIZE}"] == 1.0
    assert out["floor_ms_per_spoke"] == round((20_000.0 - 100.0) / 99, 3)
    assert out["floor_vs_target_per_spoke"] == round((20_000.0 - 100.0) / 99 / 50, 3)
    assert out[f"floor_vs_target_time_{FLEET_SIZE}"] == 2.0
    assert out[f"floor_vs_target_rss_{FLEET_SIZE}"] == 1.6
    # 50 ms at about 1.005 ms a resource: 49 resources a spoke, not 200.
    assert out["floor_resources_per_spoke_within_target"] == 49
    assert out["preview_product_program_cpu_s"] == 8.0  # the median of the previews


def test_no_floor_figures_without_both_sizes() -> None:
    s = Samples()
    s.add("resources_per_spoke", 200)
    s.add("floor_ms_1", 100.0)
    assert "floor_ms_per_spoke" not in summarise(s)


def test_the_report_shows_both_tables_and_keeps_other_sections(tmp_path: Path) -> None:
    out = summarise(samples())
    results = {**out, "command": "python -m bench --section floor",
               "date": "2026-11-26 00:00 UTC", "runs": 3, "pairs": 3,
               "machine_load_start": "1 1 1", "machine_load_end": "2 2 2"}
    md = tmp_path / "performance.md"
    md.write_text(replace_section("# Benchmarks\n", "levers", "## Levers\nkept\n"))
    write(results, report.markdown(results), "floor", tmp_path / "floor.json", md)
    text = md.read_text()
    assert "## Levers\nkept" in text
    assert "| time per extra spoke | 201 ms | 50 ms | 4.02x |" in text
    assert "| 100 spokes' worth: time | 20000 ms (1.00 ms a resource) | 10000 ms | 2.00x |" \
        in text
    assert "| 100 spokes' worth: peak RSS | 800.00 MB | 500.00 MB | 1.60x |" in text
    assert "| product (one resource per object) | 8.0 s | 8.0 s | 8.0 s |" in text
    assert json.loads((tmp_path / "floor.json").read_text())["floor_ms_1"] == 100.0


def test_the_child_registers_as_many_resources_as_asked() -> None:
    got = subprocess.run([sys.executable, "-m", "bench", FLOOR_FLAG, "25"],
                         capture_output=True, text=True, check=True)
    figures = json.loads(got.stdout.strip().splitlines()[-1])
    assert figures["resources"] == 25
    assert figures["ms"] > 0
    assert figures["peak_rss_bytes"] > 0
