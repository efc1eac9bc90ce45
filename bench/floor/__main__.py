"""`python -m bench.floor [--pairs N]`: the Python SDK's floor under mocks, set against
the program's targets, and the no-op preview of the product beside the ConfigGroup trial's
with and without the per-child aliases a move from one resource per object needs, on two
fresh spokes of a lab of its own (`.lab-bench-floor/`). Writes `bench/floor-results.json`
and its section of BENCHMARKS.md, and tears its lab down, on failure too. About 12
minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bench.commands import Runner
from bench.floor import measure, report
from bench.floor.design import FLOOR_LAB, PAIRS, RESULTS_JSON, RUNS
from bench.floor.summary import summarise
from bench.metrics import Samples
from bench.own_lab import measure_and_write
from core.interrupts import restore_sigint


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=report.PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=PAIRS, help="no-op previews of each mode")
    return p


def measure_all(pairs: int, runner: Runner, samples: Samples) -> dict[str, Any]:
    """The floor first (no lab), then the trial on its lab; returns the machine facts."""
    measure.measure_floor(runner, samples)
    return measure.measure_paths(runner, samples, pairs)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    return measure_and_write(
        command=" ".join([report.PROG, *argv]), lab_root=FLOOR_LAB,
        measure=lambda runner, samples: measure_all(args.pairs, runner, samples),
        summarise=summarise, text_table=report.text_table, write=report.write,
        results_json=RESULTS_JSON, extra={"pairs": args.pairs, "runs": RUNS})


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
