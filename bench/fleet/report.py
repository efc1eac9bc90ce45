"""The fleet section's outputs, from its figures alone: the table on the terminal and its
section of docs/performance.md, a column for each set of Pulumi binaries, with its per-run
samples, its analyses of run 1 (the first set's) and the commands it ran."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.fleet.design import (
    BINARIES,
    FLEET_SPOKE,
    GROWTH,
    HEADLINE,
    KUBECTL_SPOKE,
    SMALL_CHANGE_CM,
    SPOKES,
    TARGETS,
    WHAT,
    key_prefix,
)
from bench.fleet.summary import RSS_KINDS
from bench.metrics import EventAnalysis, Notes, Samples
from bench.report import fmt
from core.settings import Binaries

# The heading of its section of docs/performance.md.
TITLE = "knative-fleet against kubectl, growth and the program under mocks"

# Measurements 1-4: taken on each set of Pulumi binaries, a column each.
SET_ROWS: tuple[tuple[str, str], ...] = (
    ("install_fleet_s", "1. install: first `pulumi up`, 1 spoke"),
    ("install_kubectl_s", "1. install: kubectl apply --server-side + wait"),
    ("install_ratio", "1. install ratio (fleet / kubectl)"),
    ("install_fleet_cpu_busy_pct", "1. machine CPU busy during `pulumi up`"),
    ("install_fleet_spoke_cpu_s", "1. the spoke's control plane CPU during `pulumi up`"),
    ("install_kubectl_spoke_cpu_s", "1. the spoke's control plane CPU during kubectl"),
    ("install_spoke_cpu_ratio", "1. the spoke's control plane CPU ratio (fleet / kubectl)"),
    ("spoke_idle_core_pct", "1. the idle spoke's control plane, % of one core"),
    ("install_fleet_spoke_cpu_net_s", "1.   `pulumi up`'s CPU on the spoke less idle"),
    ("install_kubectl_spoke_cpu_net_s", "1.   kubectl's CPU on the spoke less idle"),
    ("install_spoke_cpu_net_ratio", "1.   ratio less idle (fleet / kubectl)"),
    ("install_kubectl_cpu_busy_pct", "1. machine CPU busy during kubectl"),
    ("install_fleet_checkpointed_s", "1. install with Pulumi's default checkpointing"),
    ("install_checkpointed_ratio", "1.   its ratio (fleet / kubectl)"),
    ("noop_preview_fleet_s", "2. no-op `pulumi preview --diff`"),
    ("noop_diff_kubectl_s", "2. `kubectl diff --server-side`"),
    ("noop_preview_ratio", "2. no-op review ratio"),
    ("small_change_preview_s", "3. one ConfigMap key: `pulumi preview`"),
    ("small_change_up_s", "3. one ConfigMap key: `pulumi up`"),
    ("destroy_fleet_s", "4. `pulumi destroy`"),
    ("destroy_kubectl_s", "4. `kubectl delete --wait`"),
    ("destroy_ratio", "4. destroy ratio"),
    ("destroy_fleet_checkpointed_s", "4. destroy with Pulumi's default checkpointing"),
    ("install_fleet_defaults_s", "6. install with Pulumi's defaults (checkpoints, serial "
     "diff, its log)"),
    ("install_defaults_ratio", "6.   its ratio (fleet / kubectl)"),
    ("noop_preview_fleet_defaults_s", "6. no-op preview with Pulumi's defaults"),
    ("noop_preview_defaults_ratio", "6.   its ratio (fleet / kubectl diff)"),
    ("destroy_fleet_defaults_s", "6. destroy with Pulumi's defaults"),
    ("pulumi_log_bytes", "6. Pulumi's log of those three runs, bytes"),
)
# kubectl's own figures: the one baseline every set is held against, in each column.
BASELINE = frozenset({"install_kubectl_s", "install_kubectl_spoke_cpu_s",
                      "install_kubectl_cpu_busy_pct", "noop_diff_kubectl_s",
                      "destroy_kubectl_s"})
# Measurement 5: taken once, in the column of the first set measured.
ONCE_ROWS: tuple[tuple[str, str], ...] = (
    ("growth_install_1_s", "5. install, 1 spoke"),
    ("growth_install_2_s", "5. install, 2 spokes"),
    ("growth_install_4_s", "5. install, 4 spokes"),
    ("growth_4_vs_1", "5. install 4 / 1"),
    ("growth_install_1_cpu_busy_pct", "5. machine CPU busy, install 1 spoke"),
    ("growth_install_4_cpu_busy_pct", "5. machine CPU busy, install 4 spokes"),
    ("growth_install_1_spokes_cpu_s", "5. spokes' control planes CPU, install 1 spoke"),
    ("growth_install_4_spokes_cpu_s", "5. spokes' control planes CPU, install 4 spokes"),
    ("growth_preview_1_s", "5. no-op preview, 1 spoke"),
    ("growth_preview_2_s", "5. no-op preview, 2 spokes"),
    ("growth_preview_4_s", "5. no-op preview, 4 spokes"),
    ("growth_preview_4_vs_1", "5. no-op preview 4 / 1"),
    ("growth_destroy_1_s", "5. destroy, 1 spoke"),
    ("growth_destroy_2_s", "5. destroy, 2 spokes"),
    ("growth_destroy_4_s", "5. destroy, 4 spokes"),
    ("growth_destroy_4_vs_1", "5. destroy 4 / 1"),
    ("program_ms_1", "5. program under mocks, 1 spoke"),
    ("program_ms_10", "5. program under mocks, 10 spokes"),
    ("program_ms_100", "5. program under mocks, 100 spokes"),
    ("program_peak_rss_bytes_100", "5. program under mocks, 100 spokes: peak RSS"),
    ("program_ms_per_spoke", "5. program time per extra spoke"),
    ("program_ms_per_spoke_1_to_10", "5.   per extra spoke, 1 -> 10"),
    ("program_ms_per_spoke_10_to_100", "5.   per extra spoke, 10 -> 100"),
    ("program_plan_ms_100", "5.   of which planning, all 100 spokes"),
    ("program_load_documents_calls_100", "5. load_documents calls, 100 spokes"),
    ("program_load_documents_parses_100", "5. release files parsed, 100 spokes"),
    ("peak_rss_bytes_total", "5. peak RSS of `pulumi up`, whole tree"),
    ("peak_rss_bytes_per_spoke", "5. peak RSS per spoke"),
    ("state_bytes_per_spoke", "5. `pulumi stack export` per spoke"),
    ("state_compact_bytes_per_spoke", "5.   same JSON without whitespace"),
    ("state_checkpoint_bytes_per_spoke", "5.   file backend checkpoint"),
)
ROWS = SET_ROWS + ONCE_ROWS
MACHINE_PREFIXES = ("machine_", "python_", "go_", "pulumi_", "kubectl_", "kubernetes_",
                    "kwok_", "load_", "binaries_")


def table(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, key, value, target verdict) rows of the figures under their own keys (the
    headline set's, for measurements 1-4); targets only where one is set."""
    limits = {target.key: target.label for target in TARGETS}
    rows = []
    for key, label in ROWS:
        verdict = results.get(f"target_{key}") or ""
        if key in limits:
            verdict = f"{verdict or 'n/a'} ({limits[key]})"
        rows.append((label, key, fmt(key, results.get(key)), verdict))
    return rows


def measured(results: dict[str, Any]) -> list[Binaries]:
    """The sets of Pulumi binaries the results hold, the first one the growth's."""
    names = str(results.get("binaries") or ",".join(BINARIES)).split(",")
    return [b for b in BINARIES if b in names]


def cells(results: dict[str, Any], key: str) -> tuple[str, ...]:
    """A figure in each set's column (BINARIES' order): a set's own figure under its key
    prefix, kubectl's baseline in every column, a figure taken once in the first set's."""
    value = fmt(key, results.get(key))
    if key in BASELINE:
        return tuple(value for _ in BINARIES)
    if key in dict(SET_ROWS):
        return tuple(fmt(key, results.get(key_prefix(b) + key)) for b in BINARIES)
    lead = measured(results)[0]
    return tuple(value if b == lead else "" for b in BINARIES)


def side_by_side(results: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(figure, key, a value per set, target verdict) rows: `table` with a column for
    each set of Pulumi binaries; the verdicts are the headline set's."""
    return [(label, key, cells(results, key), verdict)
            for label, key, _, verdict in table(results)]


def terminal(results: dict[str, Any]) -> str:
    """The table for the terminal, a column per set of Pulumi binaries, columns aligned."""
    rows = [(label, key, *values, verdict)
            for label, key, values, verdict in side_by_side(results)]
    rows.insert(0, ("figure", "key", *BINARIES, f"target (on the {HEADLINE} set)"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join([f"{row[0]:<{widths[0]}}", f"{row[1]:<{widths[1]}}",
                        *(f"{v:>{w}}" for v, w in zip(row[2:-1], widths[2:], strict=True)),
                        row[-1]]).rstrip()
             for row in rows]
    return "\n" + "\n".join(lines) + "\n"


def _sec(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def _mb(size: float) -> str:
    return f"{size / 1_000_000:.2f} MB"


def event_titles() -> dict[str, str]:
    """The followed pulumi commands of run 1 that get a section, by Notes.events key."""
    big = GROWTH[-1]
    return {"install": "install `pulumi up`, 1 spoke",
            "noop_preview": "no-op `pulumi preview`, 1 spoke",
            "destroy": "`pulumi destroy`, 1 spoke",
            f"growth_install_{big}": f"install `pulumi up`, {big} spokes",
            f"growth_destroy_{big}": f"`pulumi destroy`, {big} spokes"}


def _time_section(title: str, ev: EventAnalysis, parallel: str | None) -> list[str]:
    """One followed pulumi command: phases, kinds, slowest objects."""
    lines = [
        "", f"### Where the time goes: {title} (run 1)", "",
        "From the engine's event log, followed while the command ran (0.05 s polls); "
        "an object's time runs from its step's start to its outputs, so it includes "
        "the provider's await.", "",
        "| phase | value |", "|---|---|",
        f"| whole command | {_sec(ev.total_s)} |",
        "| start to first object step (CLI, plugins, program, spoke resolution) | "
        f"{_sec(ev.before_first_object_s)} |",
        f"| first object step to last object done | {_sec(ev.objects_s)} |",
        f"| last object done to end | {_sec(ev.after_last_object_s)} |",
        f"| object steps | {ev.objects} |",
        f"| last cluster-scoped object done (from start) | {_sec(ev.cluster_scoped_done_s)} |",
        f"| first namespaced object started (from start) | "
        f"{_sec(ev.namespaced_first_start_s)} |",
        f"| steps in flight: max / mean | {ev.max_in_flight} / "
        f"{ev.mean_in_flight:.1f} (`--parallel` {parallel}) |",
        f"| CustomResourceDefinitions: first started / last done (from start) | "
        f"{_sec(ev.crd_first_start_s)} / {_sec(ev.crd_last_done_s)} |",
        f"| CustomResourceDefinition steps in flight, mean over their window | "
        f"{'n/a' if ev.crd_mean_in_flight is None else f'{ev.crd_mean_in_flight:.1f}'} |",
        f"| Services: count / mean seconds each | {ev.services} / "
        f"{_sec(ev.service_mean_s)} |",
        "", "| kind | steps | sum of seconds | slowest |", "|---|---|---|---|",
    ]
    lines += [f"| {k} | {n} | {total:.1f} | {slowest:.1f} |"
              for k, n, total, slowest in ev.by_kind]
    lines += ["", "Slowest: " + ", ".join(
        f"`{name}` {secs:.1f} s" for name, secs in ev.slowest) + "."]
    return lines


def _time_sections(notes: Notes, settings: dict[str, str]) -> list[str]:
    lines: list[str] = []
    for key, title in event_titles().items():
        ev = notes.events.get(key)
        if ev:
            lines += _time_section(title, ev, settings.get("parallel"))
    return lines


def _state_section(notes: Notes) -> list[str]:
    """What the exported state of the largest measured stack is made of."""
    n = max(notes.state, default=0)
    st = notes.state.get(n)
    if not st:
        return []
    lines = ["", f"### What the state holds ({n} spoke(s), run 1)", "",
             "| part | size |", "|---|---|",
             f"| objects | {st.objects} |",
             f"| inputs, all objects | {_mb(st.inputs_bytes)} |",
             f"| outputs, all objects | {_mb(st.outputs_bytes)} |",
             f"| of which outputs' metadata.managedFields | {_mb(st.managed_fields_bytes)} |",
             "", "| kind | objects | bytes |", "|---|---|---|"]
    lines += [f"| {k} | {count} | {_mb(size)} |" for k, count, size in st.by_kind]
    lines += ["", "Largest: " + ", ".join(f"`{name}` {_mb(size)}"
                                          for name, size in st.largest) + "."]
    return lines


def _rss_section(results: dict[str, Any]) -> list[str]:
    if results.get("peak_rss_bytes_total") is None:
        return []
    lines = ["", "### Peak RSS by process kind", "",
             f"During the `pulumi up` of {results.get('peak_rss_spokes', 'n/a')} spoke(s), "
             "the process tree sampled every 0.2 s (psutil), resident memory summed per kind "
             "(peak of each kind, taken separately).", "",
             "| kind | peak |", "|---|---|"]
    for kind in RSS_KINDS:
        value = results.get(f"peak_rss_bytes_{kind}")
        lines.append(f"| {kind} | {fmt('peak_rss_bytes_', value)} |")
    if results.get("peak_rss_bytes_per_extra_spoke") is not None:
        lines.append("| per extra spoke (4 spokes vs 1) | "
                     f"{fmt('x_bytes', results['peak_rss_bytes_per_extra_spoke'])} |")
    return lines


def _samples_section(samples: Samples) -> list[str]:
    lines = ["", "### Per-run samples", "", "| key | samples |", "|---|---|"]
    for key in sorted(samples.values):
        lines.append(f"| `{key}` | {', '.join(fmt(key, v) for v in samples.values[key])} |")
    for key, values in sorted(samples.flags.items()):
        lines.append(f"| `{key}` | {', '.join(str(v) for v in values)} |")
    return lines


def _diff_note(notes: Notes) -> list[str]:
    differing = notes.noop_diff_kubectl_objects
    if not differing:
        return []
    return ["", f"`kubectl diff` (run 1) reported {len(differing)} object(s) as "
            "different from what was just applied: "
            + ", ".join(f"`{d}`" for d in differing[:20])
            + (" ..." if len(differing) > 20 else "") + "."]


def _machine_section(results: dict[str, Any]) -> list[str]:
    lines = ["", "### Machine", "", "| fact | value |", "|---|---|"]
    for key in sorted(results):
        if key.startswith(MACHINE_PREFIXES):
            value = results[key]
            if key == "machine_memory_bytes":
                value = f"{value / 2**30:.1f} GiB"
            lines.append(f"| {key} | {value} |")
    return lines


def _method_section() -> list[str]:
    return [
        "", "### Method", "",
        f"1. Install: knative-fleet's first `pulumi up --skip-preview` on fresh {FLEET_SPOKE} "
        f"(the run ends when every Deployment is Available) against kubectl on fresh "
        f"{KUBECTL_SPOKE} with exactly the objects `knative.plan.plan_spoke` renders, "
        "in the order of each plan's `InstallPlan.stages`, the order knative-fleet "
        "registers them in: per component the unowned stages (namespace, CRDs, "
        "cluster-scoped and external objects, cluster-scoped custom objects, the anchor) "
        "in one `kubectl apply --server-side`, `kubectl wait` for the CRDs to be "
        "Established, the anchors' uids read, then the owned stages (namespaced objects, "
        "Deployments, the release's own custom resources) with their ownerReference to "
        "their anchor set (as knative-fleet sets it) in a second apply, then `kubectl wait "
        "--for=condition=Available` for the Deployments of the deployments stage. kubectl "
        "gets the rendered objects without knative-fleet's `pulumi.com/*` provider "
        "annotations.",
        "2. No-op review: `pulumi preview --diff --expect-no-changes` against "
        "`kubectl diff --server-side` of the same objects (as applied, owners included). "
        "The timed preview runs as a user runs it; the engine's event log (its section "
        "below) comes from a second no-op preview in run 1, with `--event-log`, which "
        "costs the engine about 5 % more.",
        f"3. Small change: the entry's `config` sets {SMALL_CHANGE_CM[1]} "
        f"{SMALL_CHANGE_CM[2]}; `pulumi preview --diff`, then `pulumi up`; the value is "
        "checked on the spoke.",
        "4. Destroy: `pulumi destroy` (entries have `deleteCrdsOnDestroy: true`, so both "
        "sides delete the same objects and every run starts on a fresh spoke) against "
        "`kubectl delete --wait` of the same objects, dependents first.",
        "5. Growth: one stack with 1, 2 and 4 entries: install, no-op preview, destroy. "
        "Program: `__main__`'s `deploy()` for 1, 10 and 100 spokes under "
        "`pulumi.runtime.set_mocks` in a fresh process each, spoke resolution faked as in "
        "tests/unit/components/test_fleet_program.py (planning, rendering and every "
        "registration real); per extra spoke = (t(100) - t(1)) / 99; release files parsed = "
        "`release_fetch.load_documents` cache misses. State: `pulumi stack export` bytes of "
        "the largest stack / its spokes.",
        "",
        "Measurements 1-4 run on each set of Pulumi binaries in turn, the released set "
        "first, on the same spoke (each set's destroy leaves it fresh for the next), each "
        "set with a stack of its own whose `PATH` and `PULUMI_HOME` give that set's CLI, "
        "language host and Kubernetes provider; kubectl's side runs once per run. The "
        "fleet and kubectl sides of each run alternate which goes first. Other jobs may "
        "share the machine; the load averages above were taken at start and end.",
    ]


def _sets_paragraph(results: dict[str, Any]) -> list[str]:
    """Which set of Pulumi binaries each column is, and what was measured on which."""
    sets = measured(results)
    versions = {b: results.get(f"binaries_{b}_pulumi_version") for b in BINARIES}

    def cli(b: Binaries) -> str:
        return f" (Pulumi CLI {versions[b]})" if versions[b] else ""

    missing = [b for b in BINARIES if b not in sets]
    return [
        "Measurements 1-4 ran on each set of Pulumi binaries in turn, on the same spoke, "
        f"each against the same kubectl runs (kubectl's rows repeat in every column): "
        f"**{HEADLINE}**{cli(HEADLINE)}, the Pulumi CLI and Kubernetes provider exactly as "
        f"released, {WHAT[HEADLINE]}, whose figures the targets judge and whose keys carry "
        "no prefix; "
        + "; ".join(f"**{b}**{cli(b)}, {WHAT[b]} (docs/toolchain.md), its keys "
                    f"prefixed `{key_prefix(b)}`" for b in BINARIES if b != HEADLINE)
        + f". Measurement 5 ran once, on the {sets[0]} set (the program under mocks runs "
        "no Pulumi binary)."
        + (f" Not measured in this run (`--binaries`): {', '.join(missing)}."
           if missing else ""),
    ]


def settings_of(results: dict[str, Any]) -> dict[str, str]:
    """What the engine and provider ran with, from the results' `settings_` keys."""
    return {k.removeprefix("settings_"): v for k, v in results.items()
            if k.startswith("settings_")}


def document(results: dict[str, Any], samples: Samples, commands: Iterable[str]) -> str:
    """Its section of docs/performance.md, every figure from `results` and `samples`."""
    runs, settings = results["runs"], settings_of(results)
    lines = [
        f"## {TITLE}",
        "",
        f"Generated by `{results['command']}` on {results['date']} (`make bench` runs it "
        "with the defaults). Do not edit: run it again.",
        "",
    ]
    if runs < 3 or results["quick"]:
        lines += ["**Quick check (fewer than 3 runs or `--quick`): not a benchmark result.**", ""]
    lines += [
        f"Each figure is the median of {runs} run(s). Lab: a hub and {SPOKES} spokes, kwok "
        "`--runtime binary` clusters (real kube-apiserver, etcd, controller-manager, "
        "scheduler; fake nodes), in `.lab-bench/`. Release: Serving 1.23 with Kourier + "
        "Eventing 1.23 from the offline mirror.",
        "",
        *_sets_paragraph(results),
        "",
        "| figure | key | " + " | ".join(f"{b}: {WHAT[b]}" for b in BINARIES)
        + f" | target (on the {HEADLINE} set) |",
        "|---|---|" + "---|" * len(BINARIES) + "---|",
    ]
    lines += [f"| {label} | `{key}` | {' | '.join(values)} | {verdict} |"
              for label, key, values, verdict in side_by_side(results)]
    lines += _samples_section(samples)
    lines += _rss_section(results)
    lines += _time_sections(samples.notes, settings)
    lines += _state_section(samples.notes)
    lines += _diff_note(samples.notes)
    lines += _machine_section(results)
    lines += ["", "### Settings", "", "| setting | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in settings.items()]
    lines += _method_section()
    lines += ["", "### Commands", ""]
    lines += [f"- `{command}`" for command in commands]
    return "\n".join(lines) + "\n"

