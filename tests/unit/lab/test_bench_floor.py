"""The floor benchmark: its figures set against the program's targets, the aliased
previews against the plain ones pair by pair, its report, and its child's registration."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.floor import report
from bench.floor.design import FLEET_SIZE, MODES
from bench.floor.measure import children_of_groups
from bench.floor.summary import alias_cost_key, preview_key, summarise, vs_product_key
from bench.metrics import Samples
from bench.sections import replace_section


def samples(per_spoke: int = 200, one_ms: float = 100.0, fleet_ms: float = 20_000.0,
            rss: float = 800e6) -> Samples:
    s = Samples()
    s.add("resources_per_spoke", per_spoke)
    s.add("floor_ms_1", one_ms)
    s.add(f"floor_ms_{FLEET_SIZE}", fleet_ms)
    s.add(f"floor_peak_rss_bytes_{FLEET_SIZE}", rss)
    s.add("trial_children", 100)
    # Per round: the product, then objs, objs-aliased, yaml, yaml-aliased.
    rounds = ((8.0, 4.0, 5.0, 2.0, 4.0), (8.0, 8.0, 9.0, 4.0, 8.0),
              (12.0, 6.0, 9.0, 3.0, 6.0))
    for values in rounds:
        for mode, value in zip(MODES, values, strict=True):
            s.add(preview_key(mode, "s"), value)
            s.add(preview_key(mode, "cpu_s"), value)
            s.add(preview_key(mode, "program_cpu_s"), value)
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


def test_each_path_is_set_against_the_product_round_by_round() -> None:
    out = summarise(samples())
    # Groups: rounds 0.5x, 1x, 0.5x; the median of the rounds, not of the medians (6/8).
    assert out[vs_product_key("objs", "s")] == 0.5
    # Aliased groups: 0.625x, 1.125x, 0.75x.
    assert out[vs_product_key("objs-aliased", "program_cpu_s")] == 0.75
    assert out[vs_product_key("yaml", "cpu_s")] == 0.25
    # Medians 9 and 6 s of program CPU over 100 children: 30 ms a child.
    assert out[alias_cost_key("objs")] == 30.0
    assert out[alias_cost_key("yaml")] == 30.0


def test_no_floor_figures_without_both_sizes() -> None:
    s = Samples()
    s.add("resources_per_spoke", 200)
    s.add("floor_ms_1", 100.0)
    assert "floor_ms_per_spoke" not in summarise(s)


def test_the_report_shows_both_tables_and_keeps_other_sections(tmp_path: Path) -> None:
    out = summarise(samples())
    results = {**out, "command": report.PROG, "date": "2026-11-26 00:00 UTC", "runs": 3,
               "pairs": 3, "machine_load_start": "1 1 1", "machine_load_end": "2 2 2"}
    md = tmp_path / "BENCHMARKS.md"
    md.write_text(replace_section("# Benchmarks\n", "levers", "## Levers\nkept\n"))
    report.write(results, tmp_path / "floor.json", md)
    text = md.read_text()
    assert "## Levers\nkept" in text
    assert "| time per extra spoke | 201 ms | 50 ms | 4.02x |" in text
    assert "| 100 spokes' worth: time | 20000 ms (1.00 ms a resource) | 10000 ms | 2.00x |" \
        in text
    assert "| 100 spokes' worth: peak RSS | 800.00 MB | 500.00 MB | 1.60x |" in text
    assert "| product (one resource per object) | 8.0 s | 8.0 s | 8.0 s |  |" in text
    assert "| groups, `yaml-aliased` | 6.0 s | 6.0 s | 6.0 s | 0.50x / 0.50x / 0.50x |" in text
    assert "30.00 ms of CPU per child on `yaml`" in text
    assert json.loads((tmp_path / "floor.json").read_text())["floor_ms_1"] == 100.0


def test_the_child_registers_as_many_resources_as_asked() -> None:
    got = subprocess.run([sys.executable, "-m", "bench.floor.child", "25"],
                         capture_output=True, text=True, check=True)
    figures = json.loads(got.stdout.strip().splitlines()[-1])
    assert figures["resources"] == 25
    assert figures["ms"] > 0
    assert figures["peak_rss_bytes"] > 0


def test_the_groups_children_are_counted_by_their_parent() -> None:
    stack = "urn:pulumi:t::p::pulumi:pulumi:Stack::p-t"
    group = "urn:pulumi:t::p::kubernetes:yaml/v2:ConfigGroup::s-crds"
    resources = [
        {"urn": stack, "type": "pulumi:pulumi:Stack"},
        {"urn": group, "type": "kubernetes:yaml/v2:ConfigGroup", "parent": stack},
        {"urn": "urn:pulumi:t::p::kubernetes:core/v1:ConfigMap::anchor",
         "type": "kubernetes:core/v1:ConfigMap", "parent": stack},
        *({"urn": f"urn:pulumi:t::p::kubernetes:yaml/v2:ConfigGroup$kubernetes:apiextensions"
                  f".k8s.io/v1:CustomResourceDefinition::s-crds:crd-{i}",
           "type": "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
           "parent": group} for i in range(3)),
    ]
    assert children_of_groups(resources) == 3
