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
import signal
import sys
from datetime import UTC, datetime
from types import FrameType
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
from bench.fresh_lab import fresh_lab, on_own_lab
from bench.log import log
from bench.machine import load_average, machine_facts
from bench.metrics import Samples
from bench.scenarios import Options, Session
from lab.handle import ensure_lab
from lab.paths import REPO


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A terminated benchmark still tears its lab down (the `finally` runs)."""
    raise SystemExit(128 + signum)


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
    signal.signal(signal.SIGTERM, _on_sigterm)
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    runner = Runner(COST_LAB)
    samples = Samples()
    facts: dict[str, Any] = {}

    def work() -> None:
        facts.update(measure_all(args, runner, samples))

    if not on_own_lab(runner, work):
        return 1
    results = {"date": date, "command": " ".join([report.PROG, *argv]), "runs": args.runs,
               **facts, "machine_load_start": load_start, "machine_load_end": load_average(),
               **summarise(samples)}
    print(report.text_table(results))
    report.write(results, RESULTS_JSON, BENCHMARKS_MD)
    log(f"wrote its section of {BENCHMARKS_MD.relative_to(REPO)} and "
        f"{RESULTS_JSON.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
