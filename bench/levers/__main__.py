"""`python -m bench.levers [--pairs N]`: each setting in bench/levers/design.py against
the defaults, on one fresh spoke of a lab of its own (`.lab-bench-levers/`): install,
no-op preview and destroy with the defaults, then with the setting, N times in turn.
Writes `bench/levers-results.json` and its section of BENCHMARKS.md, and tears its lab
down, on failure too. About 3 minutes a pair and setting on 2 cores.
"""

from __future__ import annotations

import argparse
import signal
import sys
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from bench.commands import Runner
from bench.cost import measure
from bench.design import BENCHMARKS_MD
from bench.fresh_lab import fresh_lab, on_own_lab
from bench.levers import report
from bench.levers.design import LEVERS, LEVERS_LAB, PAIRS, RESULTS_JSON, SPOKES
from bench.levers.summary import summarise
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
        for pair in range(1, pairs + 1):
            log(f"pair {pair} of {pairs}")
            measure.one_stack(lab, stack, samples, SPOKES, "default")
            for lever in LEVERS:
                measure.with_variant(lab, stack, samples, lever, SPOKES, prefix="lever")
    finally:
        session.drop_stacks()
    return facts


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    runner = Runner(LEVERS_LAB)
    samples = Samples()
    facts: dict[str, Any] = {}

    def work() -> None:
        facts.update(measure_all(args.pairs, runner, samples))

    if not on_own_lab(runner, work):
        return 1
    results = {"date": date, "command": " ".join([report.PROG, *argv]), "pairs": args.pairs,
               **facts, "machine_load_start": load_start, "machine_load_end": load_average(),
               **summarise(samples)}
    print(report.text_table(results))
    report.write(results, RESULTS_JSON, BENCHMARKS_MD)
    log(f"wrote its section of {BENCHMARKS_MD.relative_to(REPO)} and "
        f"{RESULTS_JSON.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
