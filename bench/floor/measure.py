"""The floor section's two measurements (bench/floor/design.py)."""

from __future__ import annotations

from bench.commands import Runner
from bench.floor.design import FIGURES, FLEET_SIZE, PAIRS, PRODUCT_SPOKE, RUNS, SPOKES, preview_key
from bench.log import log
from bench.metrics import Samples
from bench.own_lab import bench_entry
from bench.program import FLOOR_FLAG, child, child_figures
from bench.sampling import TOTAL
from bench.section import Options, Run


def resources_per_spoke(runner: Runner) -> int:
    """What one more spoke adds to the product's registrations under mocks."""
    one, two = (child_figures(runner, n).resources for n in (1, 2))
    return two - one


def measure_floor(runner: Runner, samples: Samples) -> None:
    per_spoke = resources_per_spoke(runner)
    samples.add("resources_per_spoke", per_spoke)
    for run in range(1, RUNS + 1):
        for spokes in (1, FLEET_SIZE):
            log(f"run {run}: the SDK's floor, {spokes} spoke(s)' worth ({spokes * per_spoke})")
            got = child(runner, FLOOR_FLAG, spokes * per_spoke)
            samples.add(f"floor_ms_{spokes}", got["ms"])
            samples.add(f"floor_peak_rss_bytes_{spokes}", got["peak_rss_bytes"])


def pairs(options: Options) -> int:
    return options.pairs or PAIRS


def measure(run: Run) -> None:
    """The floor first (no lab), then the product's stack installed on a fresh spoke and
    its no-op previews, one after another."""
    measure_floor(run.bench.runner, run.samples)
    product = run.up(SPOKES, "floor")
    product.configure([bench_entry(PRODUCT_SPOKE)])
    log("product: pulumi up")
    product.install()
    for n in range(1, pairs(run.options) + 1):
        log(f"no-op preview {n} of {pairs(run.options)}")
        res = product.must("pulumi preview (no-op)", "preview", "--diff",
                           "--expect-no-changes", sample_rss=True)
        cpu = {"s": res.seconds, "cpu_s": res.cpu_s.get(TOTAL, 0.0),
               "program_cpu_s": res.cpu_s.get("program", 0.0)}
        for figure in FIGURES:
            run.samples.add(preview_key(figure), cpu[figure])
