"""The floor benchmark's two measurements (bench/floor/design.py)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from bench.breakdown.configgroup import Trial
from bench.commands import Runner, Timed
from bench.fleet_stack import BenchStack, bench_entry
from bench.floor.design import (
    FLEET_SIZE,
    INSTALLED,
    MODES,
    PRODUCT,
    PRODUCT_SPOKE,
    RUNS,
    SPOKES,
    TRIAL_SPOKE,
)
from bench.floor.summary import preview_key
from bench.fresh_lab import fresh_lab
from bench.log import log
from bench.machine import machine_facts
from bench.metrics import Samples
from bench.program import child_figures
from bench.sampling import TOTAL
from bench.scenarios import Options, Session
from lab.handle import ensure_lab

REGISTRATION = "knative-fleet-configgroup-trial:registration"
GROUP_TYPE = "kubernetes:yaml/v2:ConfigGroup"


def resources_per_spoke(runner: Runner) -> int:
    """What one more spoke adds to the product's registrations under mocks."""
    one, two = (child_figures(runner, n, PRODUCT).resources for n in (1, 2))
    return two - one


def floor_child(runner: Runner, n: int) -> dict:
    res = runner.run([sys.executable, "-m", "bench.floor.child", str(n)], dict(os.environ))
    if not res.ok:
        raise res.fail(f"the SDK's floor, {n} resources")
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure_floor(runner: Runner, samples: Samples) -> None:
    per_spoke = resources_per_spoke(runner)
    samples.add("resources_per_spoke", per_spoke)
    for run in range(1, RUNS + 1):
        for spokes in (1, FLEET_SIZE):
            log(f"run {run}: the SDK's floor, {spokes} spoke(s)' worth ({spokes * per_spoke})")
            got = floor_child(runner, spokes * per_spoke)
            samples.add(f"floor_ms_{spokes}", got["ms"])
            samples.add(f"floor_peak_rss_bytes_{spokes}", got["peak_rss_bytes"])


def _children(trial: Trial) -> int:
    """The resources the trial's groups made: those whose parent is a ConfigGroup."""
    doc = json.loads(trial.pulumi("pulumi stack export", "stack", "export").stdout)
    return children_of_groups(doc["deployment"]["resources"])


def children_of_groups(resources: list[dict]) -> int:
    """How many of a state's resources have a ConfigGroup as their parent."""
    groups = {r["urn"] for r in resources if r["type"] == GROUP_TYPE}
    return sum(1 for r in resources if r.get("parent") in groups)


def _sample(samples: Samples, mode: str, res: Timed) -> None:
    samples.add(preview_key(mode, "s"), res.seconds)
    samples.add(preview_key(mode, "cpu_s"), res.cpu_s.get(TOTAL, 0.0))
    samples.add(preview_key(mode, "program_cpu_s"), res.cpu_s.get("program", 0.0))


def _preview(mode: str, product: BenchStack, trial: Trial) -> Timed:
    if mode == PRODUCT:
        return product.must("pulumi preview (no-op)", "preview", "--diff",
                            "--expect-no-changes", sample_rss=True)
    return trial.pulumi("pulumi preview", "preview", "--diff", "--expect-no-changes",
                        "--config", f"{REGISTRATION}={mode}")


def measure_paths(runner: Runner, samples: Samples, pairs: int) -> dict[str, Any]:
    """The product and the trial installed on fresh spokes of one lab, then no-op previews
    of each path in turn; returns the machine facts."""
    fresh_lab(runner, SPOKES)
    lab = ensure_lab(runner.lab_root)
    runner.toolchain = lab.bin
    session = Session(runner, Options())
    trial = Trial(lab, runner, "floor", TRIAL_SPOKE)
    try:
        product = session.stack(lab, "floor")
        facts = machine_facts(lab.bin, product.env)
        product.configure([bench_entry(PRODUCT_SPOKE)])
        log(f"{PRODUCT}: pulumi up")
        product.install()
        trial.configure()
        log("ConfigGroup trial: pulumi up")
        trial.pulumi("pulumi up", "up", "--yes", "--skip-preview", "--config",
                     f"{REGISTRATION}={INSTALLED}")
        samples.add("trial_children", _children(trial))
        for pair in range(1, pairs + 1):
            for mode in MODES:
                log(f"pair {pair} of {pairs}: no-op preview, {mode}")
                _sample(samples, mode, _preview(mode, product, trial))
    finally:
        trial.drop()
        session.drop_stacks()
    return facts
