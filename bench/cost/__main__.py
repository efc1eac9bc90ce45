"""`python -m bench.cost [--runs N]`: what a spoke costs the machine that runs Pulumi.

On a lab of its own (`.lab-bench-cost/`): one stack of 1, 4 and 8 spokes (install,
no-op preview, destroy), the 4-spoke stack again under each engine or provider setting
tried, 8 spokes as 2 stacks of 4 through the fleet runner; then the lab is made anew
with 16 spokes for 4 stacks of 4. Writes `bench/cost-results.json` and its section of
BENCHMARKS.md, and tears its lab down, on failure too. Takes about 40 minutes a run on
2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bench.commands import Runner
from bench.cost import measure, report
from bench.cost.design import (
    COST_LAB,
    ONE_STACK,
    RESULTS_JSON,
    SHARDINGS,
    VARIANT_SPOKES,
    VARIANTS,
    Sharding,
)
from bench.cost.summary import derive, summarise
from bench.design import BENCHMARKS_MD
from bench.fresh_lab import fresh_lab
from bench.machine import machine_facts
from bench.metrics import Samples
from bench.own_lab import measure_and_write
from bench.scenarios import Options, Session
from core.interrupts import restore_sigint
from lab.handle import ensure_lab


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=report.PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=1, help="runs per figure (median)")
    p.add_argument("--no-variants", action="store_true",
                   help="skip the engine and provider settings")
    p.add_argument("--no-16", action="store_true",
                   help="skip the 16-spoke fleet (4 stacks of 4)")
    p.add_argument("--report-only", action="store_true",
                   help=f"derive the figures and write the section again from "
                        f"{RESULTS_JSON.name}'s medians, measuring nothing")
    return p


def measure_all(args: argparse.Namespace, runner: Runner, samples: Samples) -> dict[str, Any]:
    """Every run of every measurement; returns the machine facts."""
    big: Sharding = SHARDINGS[-1]
    small = [s for s in SHARDINGS if s.total <= ONE_STACK[-1]]
    facts: dict[str, Any] = {}
    fresh_lab(runner, ONE_STACK[-1])
    lab = ensure_lab(runner.lab_root)
    runner.toolchain = lab.bin
    session = Session(runner, Options())
    try:
        one = session.stack(lab, "one")
        facts = machine_facts(lab.bin, one.env)
        for _ in range(args.runs):
            for n in ONE_STACK:
                measure.one_stack(lab, one, samples, n, f"one_{n}")
            for variant in () if args.no_variants else VARIANTS:
                measure.with_variant(lab, one, samples, variant, VARIANT_SPOKES)
            for sharding in small:
                measure.sharded(lab, session, samples, sharding)
        if not args.no_16:
            session.drop_stacks()
            session.stacks.clear()
            fresh_lab(runner, big.total)
            lab = ensure_lab(runner.lab_root)
            for _ in range(args.runs):
                measure.sharded(lab, session, samples, big)
    finally:
        session.drop_stacks()
    return facts


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    if args.report_only:
        stored = json.loads(RESULTS_JSON.read_text())
        report.write(derive({k: v for k, v in stored.items() if not k.startswith("target_")}),
                     RESULTS_JSON, BENCHMARKS_MD)
        return 0
    return measure_and_write(
        command=" ".join([report.PROG, *argv]), lab_root=COST_LAB,
        measure=lambda runner, samples: measure_all(args, runner, samples),
        summarise=summarise, text_table=report.text_table, write=report.write,
        results_json=RESULTS_JSON, extra={"runs": args.runs})


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
