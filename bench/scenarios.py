"""The measured runs, and one benchmark from lab up to lab down: knative-fleet's install,
no-op review, one-key change and destroy on one spoke against the kubectl baseline on
another, the growth from 1 to 4 spokes, and the program under mocks."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import report
from bench.commands import BenchError, Runner
from bench.design import (
    BENCHMARKS_MD,
    FLEET_SPOKE,
    GROWTH,
    IDLE_WINDOW_S,
    KUBECTL_SPOKE,
    PROGRAM_SIZES,
    RESULTS_JSON,
    SMALL_CHANGE,
    SMALL_CHANGE_CM,
    SPOKES,
)
from bench.events import analyse_events
from bench.fleet_stack import BenchStack, bench_entry
from bench.fresh_lab import fresh_lab, on_own_lab
from bench.kubectl import Baseline, Kubectl, differing_objects, render_baseline
from bench.log import log
from bench.machine import load_average, machine_facts, pulumi_default_parallel
from bench.metrics import Samples
from bench.program import measure_program, measure_trial
from bench.sampling import ProcessCpu
from bench.summary import summarise
from config.fleet import parse_fleet_config
from lab.handle import Lab, ensure_lab
from lab.paths import RELEASES, REPO
from lab.stack import PARALLEL_DIFF, SKIP_CHECKPOINTS


@dataclass(frozen=True)
class Options:
    """The command line's choices (see `python -m bench --help`)."""

    runs: int = 3
    quick: bool = False
    parallel: int = 0
    qps: float = 0
    burst: int = 0


def control_plane_cpu(lab: Lab, spokes: list[str]) -> ProcessCpu:
    """CPU of the named spokes' control planes (kube-apiserver, etcd, controller-manager,
    scheduler, kwok): they share this machine's cores with Pulumi and kubectl."""
    kwok = lab.kwok()
    return ProcessCpu(pid for name in spokes for pid in kwok.pids(name).values())


def idle_core_pct(lab: Lab, spoke: str) -> float:
    """The share of one core the spoke's control plane uses with nothing applied to it,
    over IDLE_WINDOW_S (a measurement window, not a wait for a condition)."""
    cpu, start = control_plane_cpu(lab, [spoke]), time.monotonic()
    time.sleep(IDLE_WINDOW_S)
    return 100 * cpu.seconds() / (time.monotonic() - start)


def fleet_run(lab: Lab, stack: BenchStack, samples: Samples, run_no: int) -> None:
    """Measurements 1-4 with knative-fleet on FLEET_SPOKE."""
    kubectl = Kubectl(lab, FLEET_SPOKE, stack.runner)
    stack.configure([bench_entry(FLEET_SPOKE)])
    log(f"run {run_no}: the idle spoke's control plane ({IDLE_WINDOW_S:g} s)")
    samples.add("spoke_idle_core_pct", idle_core_pct(lab, FLEET_SPOKE))
    log(f"run {run_no}: pulumi up (install, {FLEET_SPOKE})")
    control_plane = control_plane_cpu(lab, [FLEET_SPOKE])
    res = stack.install(f"install-{run_no}.jsonl")
    samples.add("install_fleet_s", res.seconds)
    samples.add("install_fleet_spoke_cpu_s", control_plane.seconds())
    samples.add("install_fleet_cpu_busy_pct", res.cpu_busy_pct)
    samples.rss["install"].append(res.rss)
    samples.notes.events.setdefault("install", analyse_events(res.events))
    stack.spokes_ready([FLEET_SPOKE])
    stack.measure_state(samples, 1)
    samples.add("resources_per_spoke", samples.notes.state[1].objects)

    log(f"run {run_no}: pulumi preview (no-op)")
    res, clean = stack.noop_preview()  # timed as a user runs it: no event log
    samples.add("noop_preview_fleet_s", res.seconds)
    samples.flags["noop_preview_clean"].append(clean)
    if "noop_preview" not in samples.notes.events:
        log(f"run {run_no}: pulumi preview (no-op) again, its event log followed")
        res, _ = stack.noop_preview(f"noop-preview-{run_no}.jsonl")
        samples.notes.events["noop_preview"] = analyse_events(res.events)

    log(f"run {run_no}: one ConfigMap key changed")
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

    log(f"run {run_no}: pulumi destroy")
    res = stack.destroy(f"destroy-{run_no}.jsonl")
    samples.add("destroy_fleet_s", res.seconds)
    samples.notes.events.setdefault("destroy", analyse_events(res.events))
    kubectl.assert_fresh(FLEET_SPOKE)

    # The same install and destroy with Pulumi's default checkpointing (a full state
    # rewrite before and after every object step), for users who keep it on.
    saved = stack.env.pop(SKIP_CHECKPOINTS, None)
    try:
        log(f"run {run_no}: pulumi up with default checkpointing")
        res = stack.install()
        samples.add("install_fleet_checkpointed_s", res.seconds)
        log(f"run {run_no}: pulumi destroy with default checkpointing")
        res = stack.destroy()
        samples.add("destroy_fleet_checkpointed_s", res.seconds)
    finally:
        if saved is not None:
            stack.env[SKIP_CHECKPOINTS] = saved
    kubectl.assert_fresh(FLEET_SPOKE)


def kubectl_run(lab: Lab, runner: Runner, base: Baseline, samples: Samples,
                run_no: int) -> None:
    """The same objects with kubectl on KUBECTL_SPOKE: apply + wait, diff, delete."""
    kubectl = Kubectl(lab, KUBECTL_SPOKE, runner)
    log(f"run {run_no}: kubectl apply + wait ({KUBECTL_SPOKE}, {base.count} objects)")
    control_plane = control_plane_cpu(lab, [KUBECTL_SPOKE])
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


def growth_run(lab: Lab, stack: BenchStack, samples: Samples, run_no: int) -> None:
    """Install, no-op preview and destroy of 1, 2 and 4 spokes in one stack."""
    for n in GROWTH:
        names = [f"spoke-{i}" for i in range(1, n + 1)]
        stack.configure([bench_entry(name) for name in names])
        log(f"run {run_no}: growth, {n} spoke(s): pulumi up")
        control_plane = control_plane_cpu(lab, names)
        res = stack.install(f"growth-install-{n}-{run_no}.jsonl")
        samples.add(f"growth_install_{n}_s", res.seconds)
        samples.add(f"growth_install_{n}_spokes_cpu_s", control_plane.seconds())
        samples.add(f"growth_install_{n}_cpu_busy_pct", res.cpu_busy_pct)
        samples.rss[f"growth_{n}"].append(res.rss)
        if n == GROWTH[-1]:
            samples.notes.events.setdefault(f"growth_install_{n}", analyse_events(res.events))
        stack.spokes_ready(names)
        stack.measure_state(samples, n)
        res, clean = stack.noop_preview()
        samples.add(f"growth_preview_{n}_s", res.seconds)
        samples.flags[f"growth_preview_{n}_clean"].append(clean)
        log(f"run {run_no}: growth, {n} spoke(s): pulumi destroy")
        res = stack.destroy(f"growth-destroy-{n}-{run_no}.jsonl")
        samples.add(f"growth_destroy_{n}_s", res.seconds)
        samples.add(f"growth_destroy_{n}_cpu_busy_pct", res.cpu_busy_pct)
        if n == GROWTH[-1]:
            samples.notes.events.setdefault(f"growth_destroy_{n}", analyse_events(res.events))
        for name in names:
            Kubectl(lab, name, stack.runner).assert_fresh(name)


@dataclass
class Session:
    """Everything created by one benchmark, so that teardown removes exactly that."""

    runner: Runner
    options: Options
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    stacks: list[BenchStack] = field(default_factory=list)

    def stack(self, lab: Lab, suffix: str) -> BenchStack:
        opts = self.options
        extra_args = ["--parallel", str(opts.parallel)] if opts.parallel else []
        extra_env = {}
        if opts.qps:
            extra_env["PULUMI_K8S_CLIENT_QPS"] = str(opts.qps)
        if opts.burst:
            extra_env["PULUMI_K8S_CLIENT_BURST"] = str(opts.burst)
        stack = BenchStack(lab, f"t-bench-{self.run_id}-{suffix}", self.runner, extra_args,
                           extra_env)
        self.stacks.append(stack)
        stack.init()
        return stack

    def drop_stacks(self) -> None:
        for stack in self.stacks:
            try:
                stack.drop()
            except Exception as exc:  # noqa: BLE001 - teardown goes on
                log(f"could not remove stack {stack.stack}: {type(exc).__name__}")


def settings_of(options: Options, stack: BenchStack) -> dict[str, str]:
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


def measure(session: Session, lab: Lab, main_stack: BenchStack, samples: Samples) -> None:
    """Every run of every measurement; the two sides alternate which goes first."""
    options, runner = session.options, session.runner
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                              "fleet": [bench_entry(KUBECTL_SPOKE)]})
    base = render_baseline(cfg.fleet[0], cfg.release_base)
    for run_no in range(1, options.runs + 1):
        steps: list[Callable[[], None]] = [
            lambda r=run_no: fleet_run(lab, main_stack, samples, r),
            lambda r=run_no: kubectl_run(lab, runner, base, samples, r)]
        for step in steps if run_no % 2 else reversed(steps):
            step()
    if not options.quick:
        growth = session.stack(lab, "growth")
        for run_no in range(1, options.runs + 1):
            growth_run(lab, growth, samples, run_no)
    for run_no in range(1, options.runs + 1):
        measure_program(runner, samples, PROGRAM_SIZES, run_no)
        measure_trial(runner, samples, run_no)


def benchmark(options: Options, argv: list[str], lab_root: Path) -> int:
    """Lab up, measurements, lab down (always), then the table and the two files."""
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    runner = Runner(lab_root)
    session, samples = Session(runner, options), Samples()
    facts: dict[str, Any] = {}
    settings: dict[str, str] = {}

    def work() -> None:
        fresh_lab(runner, SPOKES)
        lab = ensure_lab(lab_root)
        runner.toolchain = lab.bin
        try:
            main_stack = session.stack(lab, "main")
            facts.update(machine_facts(lab.bin, main_stack.env))
            settings.update(settings_of(options, main_stack))
            measure(session, lab, main_stack, samples)
        finally:
            session.drop_stacks()

    if not on_own_lab(runner, work):
        return 1
    results: dict[str, Any] = {
        "date": date,
        "command": report.command_line(argv),
        "runs": options.runs,
        "quick": options.quick,
        **facts,
        "machine_load_start": load_start,
        "machine_load_end": load_average(),
        **{f"settings_{k}": v for k, v in settings.items()},
        **summarise(samples, GROWTH[-1] if not options.quick else 1),
    }
    print(report.text_table(results))
    report.write(results, samples, argv, settings, runner.commands, RESULTS_JSON, BENCHMARKS_MD)
    log(f"wrote {BENCHMARKS_MD.relative_to(REPO)} and {RESULTS_JSON.relative_to(REPO)}")
    return 0
