"""The fleet section's summary and report, from the figures in the committed
bench/results.json: the same keys come out, the derived figures agree, and its section of
docs/performance.md gets the same headings."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from bench.events import analyse_events
from bench.fleet import report
from bench.fleet.design import BINARIES, HEADLINE, TARGETS, WHAT, key_prefix
from bench.fleet.measure import state_breakdown
from bench.fleet.summary import RSS_KINDS, summarise
from bench.metrics import RssPeak, Samples
from bench.report import command_line, fmt, marked, section, write
from lab.paths import REPO

# Keys of a measurement the section no longer makes: still in a results file written
# before, read by no summary.
RETIRED = ("program_trial_",)
RESULTS: dict[str, Any] = {
    k: v for k, v in json.loads((REPO / "bench" / "results.json").read_text()).items()
    if not k.startswith(RETIRED)}
# The newest full run (growth measured) in the history: what the report's growth and
# two-set layouts are checked against, whichever run results.json holds.
FULL: dict[str, Any] = next(
    {k: v for k, v in entry.items() if not k.startswith(RETIRED) and k != "section"}
    for entry in reversed([json.loads(line) for line in
                           (REPO / "bench" / "history.jsonl").read_text().splitlines()])
    if entry.get("section") == "fleet" and entry.get("growth_install_4_s") is not None)
FACTS = ("date", "command", "runs", "quick", "binaries", "machine_", "settings_", "python_",
         "go_", "pulumi_", "kubectl_", "kubernetes_", "kwok_")
FLAGS = ("_clean", "noop_diff_kubectl_exit")


def _is_sample(key: str, value: Any) -> bool:
    """A median of samples, not a fact or a figure derived from other figures."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool)
        and not key.startswith(FACTS) and not key.startswith(("target_", "peak_rss_"))
        and "ratio" not in key and "_vs_" not in key
        and ("_per_" not in key  # a sample, per spoke, on each set of binaries:
             or key.removeprefix(key_prefix("patched")) == "resources_per_spoke")
        and key != "state_spokes"
    )


def samples_from(results: dict[str, Any]) -> Samples:
    """One run whose samples are results.json's medians (and its peaks by kind)."""
    samples = Samples()
    for key, value in results.items():
        if key.endswith(FLAGS):
            samples.flags[key].append(value)
        elif _is_sample(key, value):
            samples.values[key].append(value)
    spokes = results["peak_rss_spokes"]
    samples.rss[f"growth_{spokes}"].append(
        RssPeak({kind: results[f"peak_rss_bytes_{kind}"] for kind in RSS_KINDS}))
    if spokes > 1:  # a run with the growth measurements (not --quick)
        one = results["peak_rss_bytes_total"] - (spokes - 1) * results[
            "peak_rss_bytes_per_extra_spoke"]
        samples.rss["growth_1"].append(RssPeak({"total": round(one)}))
    return samples


def test_summary_gives_every_key_of_results_json() -> None:
    out = summarise(samples_from(RESULTS), spokes_for_rss=RESULTS["peak_rss_spokes"])
    facts = {k for k in RESULTS if k.startswith(FACTS)}
    assert set(out) | facts == set(RESULTS)


def test_summary_derives_the_same_figures() -> None:
    out = summarise(samples_from(RESULTS), spokes_for_rss=RESULTS["peak_rss_spokes"])
    for key, value in out.items():
        if isinstance(value, float) and not isinstance(RESULTS[key], str):
            assert math.isclose(value, RESULTS[key], rel_tol=2e-3), key
        else:
            assert value == RESULTS[key], key


def test_summary_without_figures_leaves_targets_open() -> None:
    out = summarise(Samples(), spokes_for_rss=1)
    assert out["install_ratio"] is None
    assert out["target_install_ratio"] is None
    assert "peak_rss_bytes_total" not in out


def notes_for_every_section(samples: Samples) -> None:
    """Run 1's analyses as the runs leave them, for each section of the report."""
    events = [(0.0, {"resourcePreEvent": {"metadata": {"urn": "u::s:ns/a"}}}),
              (0.5, {"resourcePreEvent": {"metadata": {"urn": "u::s:crd"}}}),
              (1.0, {"resOutputsEvent": {"metadata": {
                  "urn": "u::s:crd", "type": "kubernetes:apiextensions.k8s.io/v1:"
                                            "CustomResourceDefinition"}}}),
              (2.0, {"resOutputsEvent": {"metadata": {
                  "urn": "u::s:ns/a", "type": "kubernetes:core/v1:Service"}}}),
              (2.5, {"summaryEvent": {}})]
    for key in report.event_titles():
        if not (RESULTS["quick"] and key.startswith("growth_")):  # --quick skips growth
            samples.notes.events[key] = analyse_events(events)
    export = {"deployment": {"resources": [
        {"urn": "u::spoke-1:ns/cm", "type": "kubernetes:core/v1:ConfigMap",
         "inputs": {"data": {"a": "b"}},
         "outputs": {"metadata": {"managedFields": [{"manager": "x"}]}}},
        {"urn": "u::stack", "type": "pulumi:pulumi:Stack"}]}}
    samples.notes.state[RESULTS["state_spokes"]] = state_breakdown(export)
    samples.notes.noop_diff_kubectl_objects = ["rbac.authorization.k8s.io.v1.ClusterRole..x"]


def test_markdown_has_every_heading_of_its_committed_section() -> None:
    samples = samples_from(RESULTS)
    notes_for_every_section(samples)
    text = report.document(RESULTS, samples, ["pulumi up"])
    page = (REPO / "docs" / "performance.md").read_text()
    assert "fleet" in marked(page)
    committed = section(page, "fleet") or ""

    def headings(md: str) -> list[str]:
        return re.findall(r"^#+ .*$", md, flags=re.M)

    assert headings(text) == headings(committed)
    assert text.startswith(f"## {report.TITLE}\n\nGenerated by `{RESULTS['command']}` on ")
    for _, key, value, _ in report.table(RESULTS):
        assert f"| `{key}` | {value} |" in text
    assert "- `pulumi up`" in text
    assert "`kubectl diff` (run 1) reported 1 object(s)" in text


def test_table_formats_units() -> None:
    rows = {key: (value, verdict) for _, key, value, verdict in report.table(RESULTS)}
    assert rows["install_fleet_s"] == (f"{RESULTS['install_fleet_s']:.1f} s", "")
    assert rows["install_ratio"] == (
        f"{RESULTS['install_ratio']:.2f}x",
        f"{RESULTS['target_install_ratio']} (install <= 1.2x kubectl apply + wait)")
    assert rows["state_bytes_per_spoke"][0] == \
        f"{RESULTS['state_bytes_per_spoke'] / 1e6:.2f} MB"
    assert rows["install_fleet_cpu_busy_pct"][0] == \
        f"{RESULTS['install_fleet_cpu_busy_pct']:.0f} %"
    assert fmt("program_ms_1", 720.3) == "720 ms"
    assert fmt("x_s", None) == "n/a"
    assert "install_fleet_s" in report.terminal(RESULTS)


def test_write_both_files(tmp_path: Path) -> None:
    results_json, page = tmp_path / "results.json", tmp_path / "performance.md"
    page.write_text("# Performance\n\nprose\n")
    results = {**RESULTS, "command": command_line(["--quick"])}
    write(results, report.document(results, samples_from(RESULTS), []), "fleet", results_json,
          page)
    assert json.loads(results_json.read_text()) == results
    text = page.read_text()
    assert text.startswith("# Performance\n\nprose\n")
    assert "Generated by `python -m bench --quick`" in text


def test_event_analysis() -> None:
    samples = Samples()
    notes_for_every_section(samples)
    ev = samples.notes.events["install"]
    assert ev is not None
    assert ev.objects == 2 and ev.total_s == 2.5
    assert ev.before_first_object_s == 0.0 and ev.after_last_object_s == 0.5
    assert ev.cluster_scoped_done_s == 1.0 and ev.namespaced_first_start_s == 0.0
    assert ev.max_in_flight == 2 and ev.services == 1 and ev.service_mean_s == 2.0
    assert (ev.crd_first_start_s, ev.crd_last_done_s, ev.crd_mean_in_flight) == (0.5, 1.0, 1.0)
    assert ev.slowest[0] == ("Service s:ns/a", 2.0)
    assert analyse_events([]) is None


def test_state_breakdown() -> None:
    samples = Samples()
    notes_for_every_section(samples)
    st = samples.notes.state[RESULTS["state_spokes"]]
    assert st.objects == 1
    assert st.inputs_bytes == len(b'{"data":{"a":"b"}}')
    assert st.managed_fields_bytes == len(b'[{"manager":"x"}]')
    assert st.by_kind[0][:2] == ("ConfigMap", 1)
    assert st.largest[0][0] == "spoke-1:ns/cm"


@pytest.mark.parametrize("argv", [[], ["--runs", "1", "--quick"]])
def test_command_line(argv: list[str]) -> None:
    assert command_line(argv) == " ".join(["python", "-m", "bench", *argv])


def test_the_spokes_cpu_is_compared_as_measured_and_less_the_idle_spoke() -> None:
    samples = Samples()
    for key, value in {"install_fleet_s": 20.0, "install_kubectl_s": 10.0,
                       "install_fleet_spoke_cpu_s": 18.0, "install_kubectl_spoke_cpu_s": 6.0,
                       "spoke_idle_core_pct": 40.0}.items():
        samples.add(key, value)
    out = summarise(samples, spokes_for_rss=1)
    assert out["install_spoke_cpu_ratio"] == 3.0
    assert out["target_install_spoke_cpu_ratio"] == "MISS"
    assert out["install_fleet_spoke_cpu_net_s"] == 10.0  # 18 - 0.4 * 20
    assert out["install_kubectl_spoke_cpu_net_s"] == 2.0  # 6 - 0.4 * 10
    assert out["install_spoke_cpu_net_ratio"] == 5.0


def test_the_program_under_mocks_is_given_per_extra_spoke() -> None:
    samples = Samples()
    for key, value in {"program_ms_1": 700.0, "program_ms_10": 6500.0,
                       "program_ms_100": 70_000.0, "program_plan_ms_1": 10.0,
                       "program_plan_ms_10": 20.0, "program_plan_ms_100": 200.0,
                       "program_resources_100": 23_800.0}.items():
        samples.add(key, value)
    out = summarise(samples, spokes_for_rss=1)
    assert out["program_ms_per_spoke"] == round(69_300 / 99, 3)
    assert out["program_ms_per_spoke_1_to_10"] == round(5800 / 9, 3)
    assert out["target_program_ms_100"] == "MISS"


def both_sets(results: dict[str, Any]) -> Samples:
    """results.json's samples as the released set's, and the same at 0.8x as the patched
    set's: what a run on both sets leaves."""
    samples = samples_from(results)
    own = Samples()
    for key, _ in report.SET_ROWS:
        value = results.get(key)
        if key not in report.BASELINE and _is_sample(key, value):
            own.add(key, 0.8 * value)
    own.flags["noop_preview_clean"].append(True)
    samples.take(own, key_prefix("patched"), notes=False)
    return samples


def test_each_set_has_its_keys_and_the_targets_judge_the_released_one() -> None:
    out = summarise(both_sets(FULL), spokes_for_rss=FULL["peak_rss_spokes"])
    assert (BINARIES, HEADLINE, key_prefix("released")) == (("released", "patched"),
                                                           "released", "")
    for key, _ in report.SET_ROWS:  # the same figures, as measured and derived
        if key not in report.BASELINE and FULL.get(key) is not None:
            assert out[f"patched_{key}"] is not None, key
            assert out[key] == FULL[key], key
    assert out["install_ratio"] == FULL["install_ratio"]
    assert math.isclose(out["patched_install_ratio"],
                        0.8 * FULL["install_fleet_s"] / FULL["install_kubectl_s"],
                        rel_tol=2e-3)
    assert math.isclose(out["patched_noop_preview_ratio"], 0.8 * FULL["noop_preview_ratio"],
                        rel_tol=2e-3)
    assert out["patched_noop_preview_clean"] is True
    assert {f"target_{t.key}" for t in TARGETS} == {k for k in out if k.startswith("target_")}
    assert not any(k.startswith("patched_growth_") for k in out)  # growth: once


def test_a_set_not_measured_adds_no_keys_but_the_headline_ones_stay() -> None:
    patched_only = Samples()
    own = Samples()
    own.add("install_fleet_s", 8.0)
    patched_only.add("install_kubectl_s", 10.0)
    patched_only.take(own, key_prefix("patched"), notes=False)
    out = summarise(patched_only, spokes_for_rss=1)
    assert out["patched_install_ratio"] == 0.8
    assert out["install_ratio"] is None and out["target_install_ratio"] is None
    released_only = summarise(samples_from(RESULTS), spokes_for_rss=RESULTS["peak_rss_spokes"])
    assert not any(k.startswith("patched_") for k in released_only)


def test_the_report_shows_both_sets_each_against_kubectl() -> None:
    results = {**FULL, **summarise(both_sets(FULL), FULL["peak_rss_spokes"]),
               "binaries": "released,patched", "binaries_released_pulumi_version": "v3.259.0",
               "binaries_patched_pulumi_version": "v3.259.0"}
    text = report.document(results, samples_from(FULL), [])
    assert ("| figure | key | released: what users run | patched: the toolchain's build with "
            "toolchain/patches/ | target (on the released set) |") in text
    assert WHAT["released"] == "what users run"
    ratio = results["patched_install_ratio"]
    assert (f"| `install_ratio` | {fmt('x_ratio', FULL['install_ratio'])} | "
            f"{fmt('x_ratio', ratio)} | {FULL['target_install_ratio']} (install") in text
    kubectl = fmt("install_kubectl_s", FULL["install_kubectl_s"])
    assert f"| `install_kubectl_s` | {kubectl} | {kubectl} |  |" in text  # one baseline
    growth = fmt("growth_install_4_s", FULL["growth_install_4_s"])
    assert f"| `growth_install_4_s` | {growth} |  |  |" in text  # taken once
    assert "Measurement 5 ran once, on the released set" in text
    assert "keys prefixed `patched_`" in text and "Not measured" not in text
    assert "| binaries_patched_pulumi_version | v3.259.0 |" in text
    lines = report.terminal(results).splitlines()
    assert lines[1].split()[:4] == ["figure", "key", "released", "patched"]
    (row,) = [line.split() for line in lines if " install_ratio " in line]
    assert row[row.index("install_ratio") + 1:][:3] == [
        fmt("x_ratio", FULL["install_ratio"]), fmt("x_ratio", ratio),
        FULL["target_install_ratio"]]


def test_the_report_of_one_set_puts_the_growth_in_its_column() -> None:
    out = summarise(samples_from(FULL), FULL["peak_rss_spokes"])
    own = {k for k in dict(report.SET_ROWS) if k not in report.BASELINE}
    moved = {key_prefix("patched") + k if k in own else k: v for k, v in out.items()}
    results = {**{k: FULL[k] for k in ("date", "command", "runs", "quick")}, **moved,
               "binaries": "patched"}
    cells = {key: values for _, key, values, _ in report.side_by_side(results)}
    growth = fmt("growth_install_4_s", FULL["growth_install_4_s"])
    assert cells["growth_install_4_s"] == ("", growth)
    assert cells["install_fleet_s"] == ("n/a", fmt("x_s", FULL["install_fleet_s"]))
    text = report.document(results, samples_from(FULL), [])
    assert "Not measured in this run (`--binaries`): released." in text
    assert "Measurement 5 ran once, on the patched set" in text
