"""The cost section's runs: one stack of N spokes, the same stack under each setting
tried, and shards of stacks through the fleet runner. Every command's process tree is
sampled (CPU seconds and peak memory per kind of process) and each figure goes into
`Samples` under a key that says what it is."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from bench.commands import BenchError, Timed
from bench.cost.design import (
    ONE_STACK,
    OPERATIONS,
    SHARDINGS,
    VARIANT_SPOKES,
    VARIANTS,
    Sharding,
    Variant,
)
from bench.log import log
from bench.metrics import Samples
from bench.own_lab import BenchLab, BenchStack, bench_entry
from bench.sampling import TOTAL, MachineMemory, ProcessCpu
from bench.section import Options, Run
from runner.results import UNCHANGED_OPS

# The kinds a figure is given for; anything else in the tree is "other".
KINDS = ("engine", "language_host", "program", "provider", "runner")
RUNNER_OPERATION = {"install": "up", "preview": "preview", "destroy": "destroy"}


def spoke_names(count: int, first: int = 1) -> list[str]:
    return [f"spoke-{i}" for i in range(first, first + count)]


def pulumi_side(cpu: dict[str, float]) -> float:
    """The tree's CPU without the fleet runner's own processes: what the engine, the
    language host, the program, the providers and the plugins they start cost."""
    return cpu.get(TOTAL, 0.0) - cpu.get("runner", 0.0)


def record(samples: Samples, prefix: str, res: Timed, spokes: ProcessCpu) -> None:
    """Wall time, CPU by kind, peak memory by kind, the machine's busy share and the
    spokes' own control planes' CPU of one sampled command."""
    samples.add(f"{prefix}_s", res.seconds)
    samples.add(f"{prefix}_cpu_s", pulumi_side(res.cpu_s))
    samples.add(f"{prefix}_tree_cpu_s", res.cpu_s.get(TOTAL, 0.0))
    samples.add(f"{prefix}_reaped_cpu_s", res.reaped_cpu_s)
    for kind in KINDS:
        samples.add(f"{prefix}_cpu_{kind}_s", res.cpu_s.get(kind, 0.0))
        samples.add(f"{prefix}_rss_{kind}_bytes", res.rss.get(kind))
    samples.add(f"{prefix}_rss_bytes", res.rss.get(TOTAL))
    samples.add(f"{prefix}_busy_pct", res.cpu_busy_pct)
    samples.add(f"{prefix}_spokes_cpu_s", spokes.seconds())


def _stack_operation(stack: BenchStack, operation: str) -> Timed:
    if operation == "install":
        return stack.install()
    if operation == "preview":
        return stack.must("pulumi preview (no-op)", "preview", "--diff",
                          "--expect-no-changes", sample_rss=True)
    return stack.must("pulumi destroy", "destroy", "--yes", "--skip-preview",
                      sample_rss=True)


def one_stack(bench: BenchLab, stack: BenchStack, samples: Samples, spokes: int,
              prefix: str) -> None:
    """Install, no-op preview and destroy of `spokes` fresh spokes in one stack."""
    names = spoke_names(spokes)
    stack.configure([bench_entry(name) for name in names])
    for operation in OPERATIONS:
        log(f"{prefix}: {operation}, {spokes} spoke(s) in one stack")
        control_planes = bench.control_plane_cpu(names)
        res = _stack_operation(stack, operation)
        record(samples, f"{prefix}_{operation}", res, control_planes)
        if operation == "install":
            stack.spokes_ready(names)
    bench.assert_fresh(names)


def with_variant(bench: BenchLab, stack: BenchStack, samples: Samples, variant: Variant,
                 spokes: int, prefix: str = "variant") -> None:
    """`one_stack` with the variant's flags and environment, then the stack's own back."""
    args, env = list(stack.extra_args), dict(stack.env)
    stack.extra_args = [*args, *variant.args]
    stack.env.update(variant.env)
    try:
        one_stack(bench, stack, samples, spokes, f"{prefix}_{variant.key}")
    finally:
        stack.extra_args, stack.env = args, env


def shard_stacks(bench: BenchLab, sharding: Sharding) -> list[BenchStack]:
    """The sharding's stacks, each with its own slice of the lab's spokes, all ring 1."""
    stacks = []
    for i in range(sharding.stacks):
        stack = bench.stack(f"{sharding.key}-{i + 1}")
        names = spoke_names(sharding.spokes, first=1 + i * sharding.spokes)
        stack.configure([bench_entry(name) for name in names], ring=1)
        stacks.append(stack)
    return stacks


def _runner_document(res: Timed, what: str) -> dict:
    try:
        return json.loads(res.stdout)
    except ValueError as exc:
        raise res.fail(what) from exc


def check_runner(res: Timed, operation: str, stacks: Sequence[BenchStack]) -> None:
    """Every stack succeeded; a preview of installed stacks changed nothing."""
    what = f"python -m runner {RUNNER_OPERATION[operation]}"
    if not res.ok:
        raise res.fail(what)
    doc = _runner_document(res, what)
    wanted = sorted(s.stack for s in stacks)
    if sorted(doc.get("succeeded", [])) != wanted:
        raise BenchError(f"{what}: succeeded {doc.get('succeeded')}, wanted {wanted}")
    if operation == "preview":
        changed = {r["stack"]: r["changes"] for ring in doc.get("rings", [])
                   for r in ring.get("stacks", [])
                   if set(r.get("changes", {})) - UNCHANGED_OPS}
        if changed:
            raise BenchError(f"{what}: the no-op preview has changes: {changed}")


def sharded(bench: BenchLab, samples: Samples, sharding: Sharding) -> None:
    """Install, no-op preview and destroy of the sharding's stacks by the fleet runner,
    every stack at once (`--parallel` = the number of stacks)."""
    stacks = shard_stacks(bench, sharding)
    names = spoke_names(sharding.total)
    pattern = stacks[0].stack.rsplit("-", 1)[0] + "-*"
    runner = bench.runner
    for operation in OPERATIONS:
        log(f"shards {sharding.key}: {operation} through the fleet runner")
        control_planes = bench.control_plane_cpu(names)
        log_dir = runner.lab_root / "work" / f"runner-{sharding.key}-{operation}"
        with MachineMemory() as memory:
            res = runner.run(
                [sys.executable, "-m", "runner", RUNNER_OPERATION[operation], "--stacks",
                 pattern, "--parallel", str(sharding.stacks), "--json", "--log-dir",
                 str(log_dir), "--progress-every", "60"],
                stacks[0].env, sample_rss=True)
        check_runner(res, operation, stacks)
        prefix = f"shards_{sharding.key}_{operation}"
        record(samples, prefix, res, control_planes)
        samples.add(f"{prefix}_machine_used_bytes", memory.peak_used)
        if operation == "install":
            for i, stack in enumerate(stacks):
                stack.spokes_ready(spoke_names(sharding.spokes, 1 + i * sharding.spokes))
    bench.assert_fresh(names)


def runs(options: Options) -> int:
    return options.runs or 1


def measure(run: Run) -> None:
    """One stack of 1, 4 and 8 spokes, each setting, 2 stacks of 4 through the runner;
    then the lab anew with 16 spokes for 4 stacks of 4."""
    bench, samples, options = run.bench, run.samples, run.options
    small = [s for s in SHARDINGS if s.total <= ONE_STACK[-1]]
    one = run.up(ONE_STACK[-1], "one")
    for _ in range(runs(options)):
        for n in ONE_STACK:
            one_stack(bench, one, samples, n, f"one_{n}")
        for variant in () if options.no_variants else VARIANTS:
            with_variant(bench, one, samples, variant, VARIANT_SPOKES)
        for sharding in small:
            sharded(bench, samples, sharding)
    if not options.no_16:
        bench.up(SHARDINGS[-1].total)
        for _ in range(runs(options)):
            sharded(bench, samples, SHARDINGS[-1])
