"""`python -m bench.levers [--pairs N]`: each setting in bench/levers/design.py against
the defaults, on one fresh spoke of a lab of its own (`.lab-bench-levers/`): install,
no-op preview and destroy with the defaults, then with the setting, N times in turn.
Writes `bench/levers-results.json` and its section of BENCHMARKS.md, and tears its lab
down, on failure too. About 3 minutes a pair and setting on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bench.commands import Runner
from bench.cost import measure
from bench.fresh_lab import fresh_lab
from bench.levers import report
from bench.levers.design import (
    LEVERS,
    LEVERS_LAB,
    PAIRS,
    RESULTS_JSON,
    SPOKES,
    TOOLCHAIN_SCRIPT,
    stock_provider,
)
from bench.levers.summary import summarise
from bench.log import log
from bench.machine import machine_facts
from bench.metrics import Samples
from bench.own_lab import measure_and_write
from bench.scenarios import Options, Session
from core.interrupts import restore_sigint
from lab.handle import ensure_lab


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=report.PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=PAIRS,
                   help="runs of each setting beside the defaults")
    return p


def measure_all(pairs: int, runner: Runner, samples: Samples) -> dict[str, Any]:
    """Every pair; returns the machine facts."""
    fresh_lab(runner, SPOKES)
    lab = ensure_lab(runner.lab_root)
    runner.toolchain = lab.bin
    session = Session(runner, Options())
    try:
        stack = session.stack(lab, "levers")
        facts = machine_facts(lab.bin, stack.env)
        stock = runner.run([str(TOOLCHAIN_SCRIPT), "--stock-provider"], stack.env)
        if not stock.ok:
            raise stock.fail("toolchain/build.sh --stock-provider")
        levers = [*LEVERS, stock_provider(stock.stdout.strip(), stack.env["PATH"])]
        for pair in range(1, pairs + 1):
            log(f"pair {pair} of {pairs}")
            measure.one_stack(lab, stack, samples, SPOKES, "default")
            for lever in levers:
                measure.with_variant(lab, stack, samples, lever, SPOKES, prefix="lever")
    finally:
        session.drop_stacks()
    return facts


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    return measure_and_write(
        command=" ".join([report.PROG, *argv]), lab_root=LEVERS_LAB,
        measure=lambda runner, samples: measure_all(args.pairs, runner, samples),
        summarise=summarise, text_table=report.text_table, write=report.write,
        results_json=RESULTS_JSON, extra={"pairs": args.pairs})


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
