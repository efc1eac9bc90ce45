"""The fleet section's runs: knative-fleet's install, no-op review, one-key change and
destroy on one spoke, on each set of Pulumi binaries in turn, against the kubectl
baseline on another, the growth from 1 to 4 spokes, the program under mocks, and what the
state is made of."""

from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.commands import BenchError
from bench.events import analyse_events
from bench.fleet.design import (
    BINARIES,
    FLEET_SPOKE,
    GROWTH,
    IDLE_WINDOW_S,
    KUBECTL_SPOKE,
    PROGRAM_SIZES,
    RUNS,
    SMALL_CHANGE,
    SMALL_CHANGE_CM,
    SPOKES,
    key_prefix,
)
from bench.kubectl import Baseline, differing_objects, render_baseline
from bench.log import log
from bench.machine import pulumi_default_parallel, pulumi_version
from bench.metrics import Samples, StateBreakdown
from bench.own_lab import BenchLab, BenchStack, bench_entry
from bench.program import child_figures
from bench.section import Options, Run
from config.fleet import parse_fleet_config
from core.settings import Binaries
from lab.paths import RELEASES
from lab.stack import PARALLEL_DIFF, SKIP_CHECKPOINTS
from lab.toolchain import pulumi_bin, with_test_tools


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (0 for None)."""
    return len(json.dumps(value, separators=(",", ":")).encode()) if value is not None else 0


def state_breakdown(export: dict) -> StateBreakdown:
    """What the bytes of a `pulumi stack export` are: inputs, outputs, managedFields,
    per kind, and the largest resources."""
    resources = export.get("deployment", {}).get("resources") or []
    kube = [r for r in resources if r.get("type", "").startswith("kubernetes:")]
    by_kind: dict[str, list[int]] = defaultdict(list)
    managed = 0
    for r in kube:
        by_kind[r["type"].rpartition(":")[2]].append(json_size(r))
        managed += json_size(
            ((r.get("outputs") or {}).get("metadata") or {}).get("managedFields"))
    return StateBreakdown(
        objects=len(kube),
        inputs_bytes=sum(json_size(r.get("inputs")) for r in kube),
        outputs_bytes=sum(json_size(r.get("outputs")) for r in kube),
        managed_fields_bytes=managed,
        by_kind=sorted(((k, len(v), sum(v)) for k, v in by_kind.items()),
                       key=lambda row: -row[2])[:8],
        largest=sorted(((r["urn"].rsplit("::", 1)[-1], json_size(r)) for r in kube),
                       key=lambda row: -row[1])[:5],
    )


def measure_state(stack: BenchStack, samples: Samples, spokes: int) -> None:
    """Export bytes, the same JSON without whitespace, and the checkpoint file."""
    size, export = stack.export()
    samples.add(f"state_bytes_{spokes}", size)
    samples.add(f"state_compact_bytes_{spokes}", json_size(export))
    checkpoint = stack.checkpoint_bytes()
    if checkpoint is not None:
        samples.add(f"state_checkpoint_bytes_{spokes}", checkpoint)
    samples.notes.state.setdefault(spokes, state_breakdown(export))


def idle_core_pct(bench: BenchLab, spoke: str) -> float:
    """The share of one core the spoke's control plane uses with nothing applied to it,
    over IDLE_WINDOW_S (a measurement window, not a wait for a condition)."""
    cpu, start = bench.control_plane_cpu([spoke]), time.monotonic()
    time.sleep(IDLE_WINDOW_S)
    return 100 * cpu.seconds() / (time.monotonic() - start)


def fleet_run(bench: BenchLab, stack: BenchStack, samples: Samples, run_no: int,
              lead: bool = True) -> None:
    """Measurements 1-4 with knative-fleet on FLEET_SPOKE, on the stack's set of Pulumi
    binaries. `lead`: the set whose run-1 analyses the report shows; only it runs the
    extra no-op preview that follows the event log (every set's install and destroy
    follow theirs, so that the sets' timings compare)."""
    kubectl = bench.kubectl(FLEET_SPOKE)
    run = f"run {run_no}, {stack.binaries}"
    stack.configure([bench_entry(FLEET_SPOKE)])
    log(f"{run}: the idle spoke's control plane ({IDLE_WINDOW_S:g} s)")
    samples.add("spoke_idle_core_pct", idle_core_pct(bench, FLEET_SPOKE))
    log(f"{run}: pulumi up (install, {FLEET_SPOKE})")
    control_plane = bench.control_plane_cpu([FLEET_SPOKE])
    res = stack.install(f"install-{stack.binaries}-{run_no}.jsonl")
    samples.add("install_fleet_s", res.seconds)
    samples.add("install_fleet_spoke_cpu_s", control_plane.seconds())
    samples.add("install_fleet_cpu_busy_pct", res.cpu_busy_pct)
    samples.rss["install"].append(res.rss)
    samples.notes.events.setdefault("install", analyse_events(res.events))
    stack.spokes_ready([FLEET_SPOKE])
    measure_state(stack, samples, 1)
    samples.add("resources_per_spoke", samples.notes.state[1].objects)

    log(f"{run}: pulumi preview (no-op)")
    res, clean = stack.noop_preview()  # timed as a user runs it: no event log
    samples.add("noop_preview_fleet_s", res.seconds)
    samples.flags["noop_preview_clean"].append(clean)
    if lead and "noop_preview" not in samples.notes.events:
        log(f"{run}: pulumi preview (no-op) again, its event log followed")
        res, _ = stack.noop_preview(f"noop-preview-{stack.binaries}-{run_no}.jsonl")
        samples.notes.events["noop_preview"] = analyse_events(res.events)

    log(f"{run}: one ConfigMap key changed")
    stack.configure([bench_entry(FLEET_SPOKE, SMALL_CHANGE)])
    res = stack.must("pulumi preview", "preview", "--diff")
    samples.add("small_change_preview_s", res.seconds)
    res = stack.must("pulumi up", "up", "--yes", "--skip-preview")
    samples.add("small_change_up_s", res.seconds)
    namespace, name, key = SMALL_CHANGE_CM
    got = kubectl("get", "configmap", "-n", namespace, name, "-o", "json")
    value = (json.loads(got.stdout).get("data") or {}).get(key)
    if value != SMALL_CHANGE["autoscaler"][key]:
        raise BenchError(f"the small change did not land: {name}.{key} = {value!r}")

    log(f"{run}: pulumi destroy")
    res = stack.destroy(f"destroy-{stack.binaries}-{run_no}.jsonl")
    samples.add("destroy_fleet_s", res.seconds)
    samples.notes.events.setdefault("destroy", analyse_events(res.events))
    kubectl.assert_fresh(FLEET_SPOKE)

    # The same install and destroy with Pulumi's default checkpointing (a full state
    # rewrite before and after every object step), for users who keep it on.
    saved = stack.env.pop(SKIP_CHECKPOINTS, None)
    try:
        log(f"{run}: pulumi up with default checkpointing")
        res = stack.install()
        samples.add("install_fleet_checkpointed_s", res.seconds)
        log(f"{run}: pulumi destroy with default checkpointing")
        res = stack.destroy()
        samples.add("destroy_fleet_checkpointed_s", res.seconds)
    finally:
        if saved is not None:
            stack.env[SKIP_CHECKPOINTS] = saved
    kubectl.assert_fresh(FLEET_SPOKE)
    defaults_run(stack, samples, run)
    kubectl.assert_fresh(FLEET_SPOKE)


def logged_home(stack: BenchStack) -> Path:
    """A Pulumi home as Pulumi installs it, its `logs` a directory the CLI writes its log
    into, with the set's plugin store (the toolchain's homes have a file there instead)."""
    source = Path(stack.env["PULUMI_HOME"])
    home = stack.work / f"pulumi-home-logged-{stack.binaries}"
    (home / "logs").mkdir(parents=True, exist_ok=True)
    if not (home / "plugins").exists():
        (home / "plugins").symlink_to(source / "plugins")
    return home


@contextmanager
def pulumi_defaults(stack: BenchStack) -> Iterator[Path]:
    """The stack's commands with Pulumi as it is installed: checkpoints on, diffs in the
    step loop, the automatic log written (none of the README's three settings); yields
    the `logs` directory the CLI writes into. The stack's own settings come back after."""
    saved = {k: stack.env.pop(k, None) for k in (SKIP_CHECKPOINTS, PARALLEL_DIFF)}
    home = stack.env["PULUMI_HOME"]
    stack.env["PULUMI_HOME"] = str(logged_home(stack))
    try:
        yield Path(stack.env["PULUMI_HOME"]) / "logs"
    finally:
        stack.env["PULUMI_HOME"] = home
        stack.env.update({k: v for k, v in saved.items() if v is not None})


def take_logs(logs: Path) -> int:
    """Bytes the CLI has written into `logs` since it was last emptied; empties it, so
    that the next command's log is counted on its own."""
    written = sum(f.stat().st_size for f in logs.rglob("*") if f.is_file())
    shutil.rmtree(logs)
    logs.mkdir()
    return written


def defaults_run(stack: BenchStack, samples: Samples, run: str) -> None:
    """Install, no-op preview and destroy with Pulumi as it is installed: checkpoints on,
    diffs in the step loop, the automatic log written: none of the README's three
    settings."""
    with pulumi_defaults(stack) as logs:
        log(f"{run}: pulumi up with Pulumi's defaults")
        samples.add("install_fleet_defaults_s", stack.install().seconds)
        log(f"{run}: pulumi preview (no-op) with Pulumi's defaults")
        res, clean = stack.noop_preview()
        samples.add("noop_preview_fleet_defaults_s", res.seconds)
        samples.flags["noop_preview_defaults_clean"].append(clean)
        log(f"{run}: pulumi destroy with Pulumi's defaults")
        samples.add("destroy_fleet_defaults_s", stack.destroy().seconds)
        samples.add("pulumi_log_bytes", take_logs(logs))


def kubectl_run(bench: BenchLab, base: Baseline, samples: Samples, run_no: int) -> None:
    """The same objects with kubectl on KUBECTL_SPOKE: apply + wait, diff, delete."""
    kubectl = bench.kubectl(KUBECTL_SPOKE)
    log(f"run {run_no}: kubectl apply + wait ({KUBECTL_SPOKE}, {base.count} objects)")
    control_plane = bench.control_plane_cpu([KUBECTL_SPOKE])
    seconds, busy, applied = kubectl.install(base)
    samples.add("install_kubectl_s", seconds)
    samples.add("install_kubectl_spoke_cpu_s", control_plane.seconds())
    samples.add("install_kubectl_cpu_busy_pct", busy)
    log(f"run {run_no}: kubectl diff --server-side")
    res = kubectl.diff(applied)
    samples.add("noop_diff_kubectl_s", res.seconds)
    samples.flags["noop_diff_kubectl_exit"].append(res.code)
    if samples.notes.noop_diff_kubectl_objects is None:
        samples.notes.noop_diff_kubectl_objects = differing_objects(res.stdout)
    log(f"run {run_no}: kubectl delete --wait")
    res = kubectl.delete(applied)
    samples.add("destroy_kubectl_s", res.seconds)
    kubectl.assert_fresh(KUBECTL_SPOKE)


def growth_run(bench: BenchLab, stack: BenchStack, samples: Samples, run_no: int) -> None:
    """Install, no-op preview and destroy of 1, 2 and 4 spokes in one stack."""
    for n in GROWTH:
        names = [f"spoke-{i}" for i in range(1, n + 1)]
        stack.configure([bench_entry(name) for name in names])
        log(f"run {run_no}: growth, {n} spoke(s): pulumi up")
        control_plane = bench.control_plane_cpu(names)
        res = stack.install(f"growth-install-{n}-{run_no}.jsonl")
        samples.add(f"growth_install_{n}_s", res.seconds)
        samples.add(f"growth_install_{n}_spokes_cpu_s", control_plane.seconds())
        samples.add(f"growth_install_{n}_cpu_busy_pct", res.cpu_busy_pct)
        samples.rss[f"growth_{n}"].append(res.rss)
        if n == GROWTH[-1]:
            samples.notes.events.setdefault(f"growth_install_{n}", analyse_events(res.events))
        stack.spokes_ready(names)
        measure_state(stack, samples, n)
        res, clean = stack.noop_preview()
        samples.add(f"growth_preview_{n}_s", res.seconds)
        samples.flags[f"growth_preview_{n}_clean"].append(clean)
        log(f"run {run_no}: growth, {n} spoke(s): pulumi destroy")
        res = stack.destroy(f"growth-destroy-{n}-{run_no}.jsonl")
        samples.add(f"growth_destroy_{n}_s", res.seconds)
        samples.add(f"growth_destroy_{n}_cpu_busy_pct", res.cpu_busy_pct)
        if n == GROWTH[-1]:
            samples.notes.events.setdefault(f"growth_destroy_{n}", analyse_events(res.events))
        bench.assert_fresh(names)


def program_run(bench: BenchLab, samples: Samples, run_no: int) -> None:
    """The program's own time for each size, each in a fresh process."""
    for n in PROGRAM_SIZES:
        log(f"run {run_no}: program under mocks, {n} spoke(s)")
        got = child_figures(bench.runner, n)
        for name in ("ms", "plan_ms", "resources", "load_documents_calls",
                     "load_documents_parses", "peak_rss_bytes"):
            samples.add(f"program_{name}_{n}", getattr(got, name))


def stack_settings(options: Options) -> tuple[tuple[str, ...], dict[str, str]]:
    """The flags and environment every pulumi command gets from the command line."""
    env = {}
    if options.qps:
        env["PULUMI_K8S_CLIENT_QPS"] = str(options.qps)
    if options.burst:
        env["PULUMI_K8S_CLIENT_BURST"] = str(options.burst)
    return ("--parallel", str(options.parallel)) if options.parallel else (), env


def engine_settings(options: Options, stack: BenchStack) -> dict[str, str]:
    """What the engine and provider ran with, for the report and results.json."""
    default_parallel = pulumi_default_parallel(stack.env)
    return {
        "parallel": str(options.parallel) if options.parallel
        else f"{default_parallel} (CLI default)",
        "provider_qps": f"{options.qps:g}" if options.qps else "provider default",
        "provider_burst": str(options.burst) if options.burst else "provider default",
        "engine_env": f"{SKIP_CHECKPOINTS}={stack.env.get(SKIP_CHECKPOINTS, 'unset')}"
                      " (the README's setting; rows marked 'default checkpointing' unset it), "
                      f"{PARALLEL_DIFF}={stack.env.get(PARALLEL_DIFF, 'unset')}"
                      " (the README's setting)",
    }


def runs(options: Options) -> int:
    return options.runs or RUNS


def binaries(options: Options) -> tuple[Binaries, ...]:
    """The sets of Pulumi binaries measured, in BINARIES' order: the headline set first."""
    asked = options.binaries or BINARIES
    return tuple(b for b in BINARIES if b in asked)


def binaries_facts(bench: BenchLab, stacks: dict[Binaries, BenchStack]) -> dict[str, str]:
    """Each set's CLI version, once it is sure each stack runs its own set's CLI: with a
    set's bin directory missing, PATH would fall through to the toolchain's."""
    facts = {}
    for name, stack in stacks.items():
        want = pulumi_bin(bench.lab.bin, name) / "pulumi"
        found = shutil.which("pulumi", path=stack.env["PATH"])
        if found != str(want):
            raise BenchError(f"the {name} Pulumi CLI is not at {want} (found {found})")
        facts[f"binaries_{name}_pulumi_version"] = pulumi_version(stack.env)
    return facts


def fleet_steps(bench: BenchLab, stacks: dict[Binaries, BenchStack], base: Baseline,
                own: dict[Binaries, Samples], samples: Samples,
                run_no: int) -> list[Callable[[], None]]:
    """Run `run_no`'s steps in order: each set in turn (the headline set first), on one
    spoke, each into its own samples, and the kubectl baseline they are all held against;
    the knative-fleet and kubectl sides alternate which goes first."""
    lead = next(iter(stacks))
    fleet: list[Callable[[], None]] = [
        lambda b=b: fleet_run(bench, stacks[b], own[b], run_no, b == lead) for b in stacks]
    kubectl = [lambda: kubectl_run(bench, base, samples, run_no)]
    return fleet + kubectl if run_no % 2 else kubectl + fleet


def measure(run: Run) -> None:
    """Every run of every measurement. The growth runs on the first set measured (the
    headline set unless --binaries leaves it out)."""
    bench, samples, options = run.bench, run.samples, run.options
    sets = binaries(options)
    if "patched" in sets:
        log("toolchain: the Pulumi binaries with the toolchain's patches "
            "(toolchain/build.sh --test-tools)")
        with_test_tools()
    args, env = stack_settings(options)
    stacks = {sets[0]: run.up(SPOKES, sets[0], args, env, binaries=sets[0])}
    stacks.update({b: bench.stack(b, args, env, binaries=b) for b in sets[1:]})
    run.facts.update(binaries_facts(bench, stacks))
    run.facts.update({f"settings_{k}": v
                      for k, v in engine_settings(options, stacks[sets[0]]).items()})
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                              "fleet": [bench_entry(KUBECTL_SPOKE)]})
    base = render_baseline(cfg.fleet[0], cfg.release_base)
    own = {b: Samples() for b in sets}
    for run_no in range(1, runs(options) + 1):
        for step in fleet_steps(bench, stacks, base, own, samples, run_no):
            step()
    for b in sets:
        samples.take(own[b], key_prefix(b), notes=b == sets[0])
    if not options.quick:
        growth = bench.stack("growth", args, env, binaries=sets[0])
        for run_no in range(1, runs(options) + 1):
            growth_run(bench, growth, samples, run_no)
    for run_no in range(1, runs(options) + 1):
        program_run(bench, samples, run_no)
