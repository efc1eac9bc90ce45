"""Fleet benchmark: knative-fleet against plain kubectl on a lab of its own.

`python -m bench [--runs 3] [--quick]` brings up a hub and 4 spokes in
`.lab-bench/` (never the test lab in `.lab/`), measures install, no-op review, a
one-key change, destroy and growth, prints a table, writes `BENCHMARKS.md` and
`bench/results.json`, and tears its lab down, on failure too. Every figure is the
median of `--runs` runs; nothing in the two files is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from types import FrameType

from bench.design import BENCH_LAB
from bench.program import CHILD_FLAG, PRODUCT, REGISTRATION_FLAG, program_child
from bench.scenarios import Options, benchmark
from core.interrupts import restore_sigint


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A terminated benchmark still tears its lab down (the `finally` runs)."""
    raise SystemExit(128 + signum)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    p.add_argument("--quick", action="store_true",
                   help="skip the growth measurements on 1, 2 and 4 spokes")
    p.add_argument("--parallel", type=int, default=0,
                   help="pass --parallel N to every pulumi up/preview/destroy")
    p.add_argument("--qps", type=float, default=0,
                   help="PULUMI_K8S_CLIENT_QPS for the provider (default: its own)")
    p.add_argument("--burst", type=int, default=0,
                   help="PULUMI_K8S_CLIENT_BURST for the provider (default: its own)")
    p.add_argument(CHILD_FLAG, type=int, help=argparse.SUPPRESS)
    p.add_argument(REGISTRATION_FLAG, default=PRODUCT, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    """Parses the flags, runs every measurement, writes the results."""
    cli = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = cli.parse_args(argv)
    if args.program_child:
        print(json.dumps(program_child(args.program_child, args.program_registration).to_json()))
        return 0
    if args.runs < 1:
        cli.error("--runs must be at least 1")
    signal.signal(signal.SIGTERM, _on_sigterm)
    options = Options(runs=args.runs, quick=args.quick, parallel=args.parallel, qps=args.qps,
                      burst=args.burst)
    return benchmark(options, argv, BENCH_LAB)


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
