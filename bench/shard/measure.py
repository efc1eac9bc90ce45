"""The shard section's runs: one stack of the recommended shard size installed, its state
read, previewed with no change and destroyed, with Pulumi as installed but for the
README's opt-in on install and destroy (bench/shard/design.py says why), each command's
process tree sampled as the cost section samples it; then the program under mocks at
the same size."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bench.commands import Timed
from bench.cost.measure import record, spoke_names
from bench.fleet.measure import json_size, pulumi_defaults, state_breakdown, take_logs
from bench.log import log
from bench.machine import pulumi_default_parallel
from bench.metrics import Samples
from bench.own_lab import BenchLab, BenchStack, bench_entry
from bench.program import child_figures
from bench.sampling import MachineMemory
from bench.section import Options, Run
from bench.shard.design import (
    COMMAND_TIMEOUT_S,
    ENGINE_ENV,
    PROGRAM,
    RUNS,
    SPOKES,
    STACK,
)
from lab.stack import SKIP_CHECKPOINTS


def spokes(options: Options) -> int:
    """The stack's size: the recommended shard's unless `--shard-spokes` lowers it."""
    return options.shard_spokes or SPOKES


def runs(options: Options) -> int:
    return options.runs or RUNS


def sampled(bench: BenchLab, samples: Samples, names: list[str], operation: str,
            command: Callable[[], Timed]) -> Timed:
    """Runs one operation sampled: its tree's CPU and memory by kind (`record`), the
    spokes' control planes' CPU and the machine's memory in use, which the lab shares."""
    control_planes = bench.control_plane_cpu(names)
    with MachineMemory() as memory:
        res = command()
    record(samples, operation, res, control_planes)
    samples.add(f"{operation}_machine_used_bytes", memory.peak_used)
    return res


def measure_state(stack: BenchStack, samples: Samples) -> None:
    """What the installed stack's state weighs: the export as the CLI prints it, compact,
    and the checkpoint file; and how many Kubernetes objects it holds."""
    size, export = stack.export()
    samples.add("state_bytes", size)
    samples.add("state_compact_bytes", json_size(export))
    checkpoint = stack.checkpoint_bytes()
    if checkpoint is not None:
        samples.add("state_checkpoint_bytes", checkpoint)
    samples.add("state_objects", state_breakdown(export).objects)


@contextmanager
def skipping_checkpoints(stack: BenchStack) -> Iterator[None]:
    """The README's opt-in for one command: the state written once, at its end."""
    stack.env[SKIP_CHECKPOINTS] = "true"
    try:
        yield
    finally:
        stack.env.pop(SKIP_CHECKPOINTS, None)


def shard_run(bench: BenchLab, stack: BenchStack, samples: Samples, n: int,
              run_no: int) -> None:
    """Install, state, no-op preview and destroy of `n` fresh spokes in one stack with
    Pulumi as installed, install and destroy with the README's opt-in; the log bytes the
    CLI writes, per operation and in all."""
    names = spoke_names(n)
    stack.configure([bench_entry(name) for name in names])
    with pulumi_defaults(stack) as logs:
        log(f"run {run_no}: pulumi up, {n} spoke(s) in one stack, {SKIP_CHECKPOINTS}=true")
        with skipping_checkpoints(stack):
            sampled(bench, samples, names, "install", stack.install)
        install_log = take_logs(logs)
        stack.spokes_ready(names)
        measure_state(stack, samples)
        between = take_logs(logs)  # `stack output` and `stack export` write theirs too
        log(f"run {run_no}: pulumi preview (no-op), Pulumi's defaults")

        def preview() -> Timed:
            res, clean = stack.noop_preview(sample_rss=True)
            samples.flags["preview_clean"].append(clean)
            return res

        sampled(bench, samples, names, "preview", preview)
        preview_log = take_logs(logs)
        log(f"run {run_no}: pulumi destroy, {SKIP_CHECKPOINTS}=true")
        with skipping_checkpoints(stack):
            sampled(bench, samples, names, "destroy",
                    lambda: stack.must("pulumi destroy", "destroy", "--yes", "--skip-preview",
                                       sample_rss=True))
        destroy_log = take_logs(logs)
    for operation, written in (("install", install_log), ("preview", preview_log),
                               ("destroy", destroy_log)):
        samples.add(f"{operation}_log_bytes", written)
    samples.add("pulumi_log_bytes", install_log + between + preview_log + destroy_log)
    bench.assert_fresh(names)


def program_run(run: Run, n: int, run_no: int) -> None:
    """The program for `n` spokes under mocks, in a fresh process."""
    log(f"run {run_no}: program under mocks, {n} spoke(s)")
    got = child_figures(run.bench.runner, n)
    for name in PROGRAM:
        run.samples.add(f"program_{name}", getattr(got, name))


def measure(run: Run) -> None:
    """Every run on one lab of `spokes` spokes and one stack, then the program's."""
    n = spokes(run.options)
    stack = run.up(n, STACK)
    stack.timeout_s = COMMAND_TIMEOUT_S
    run.facts.update({"spokes": n, "settings_engine_env": ENGINE_ENV,
                      "settings_parallel":
                      f"{pulumi_default_parallel(stack.env)} (CLI default)"})
    for run_no in range(1, runs(run.options) + 1):
        shard_run(run.bench, stack, run.samples, n, run_no)
    for run_no in range(1, runs(run.options) + 1):
        program_run(run, n, run_no)
