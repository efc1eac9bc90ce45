"""`python -m bench [--section NAME ...]`: knative-fleet's benchmark, section by section.

Each section brings up a lab of its own (`.lab-bench*/`, never the tests' `.lab/`),
measures, tears its lab down (on failure too, its logs kept in the lab's `dump/`),
prints its table, and writes its results file and its part of docs/performance.md.
Without --section, the fleet section runs, as `make bench` runs it. docs/performance.md
("The benchmark") says what each section measures and how long it takes.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import cast, get_args

from bench.log import log
from bench.report import command_line
from bench.section import Options, Section
from core.interrupts import restore_sigint
from core.settings import Binaries

SECTIONS = (
    Section("fleet", "bench.fleet", ".lab-bench", "results.json", "fleet"),
    Section("cost", "bench.cost", ".lab-bench-cost", "cost-results.json", "cost-per-spoke"),
    Section("breakdown", "bench.breakdown", ".lab-bench-breakdown", "breakdown-results.json",
            "breakdown"),
    Section("levers", "bench.levers", ".lab-bench-levers", "levers-results.json", "levers"),
    Section("floor", "bench.floor", ".lab-bench-floor", "floor-results.json", "floor"),
    Section("policy", "bench.policy", ".lab-bench-policy", "policy-results.json", "policy"),
    Section("shard", "bench.shard", ".lab-bench-shard", "shard-results.json", "shard"),
)
DEFAULT = ("fleet",)
ALL = "all"
# The sections each option is for: given with none of them selected, it is a mistake.
OPTION_SECTIONS = {
    "runs": ("fleet", "cost", "shard"), "quick": ("fleet",), "parallel": ("fleet",),
    "qps": ("fleet",), "burst": ("fleet",), "pairs": ("levers", "floor", "policy"),
    "no_variants": ("cost",), "no_16": ("cost",), "binaries": ("fleet",),
    "shard_spokes": ("shard",),
}


def binaries_list(text: str) -> tuple[Binaries, ...]:
    """`--binaries`: comma-separated sets of Pulumi binaries, each once."""
    known = get_args(Binaries)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give one or more of {', '.join(known)}, comma-separated")
    return tuple(cast(Binaries, name) for name in dict.fromkeys(names))


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A terminated benchmark still tears its lab down (the `finally` runs)."""
    raise SystemExit(128 + signum)


class _Parser(argparse.ArgumentParser):
    def format_help(self) -> str:
        """Lists the sections with their summaries, imported only when help is asked for
        (a child process imports no section it does not run)."""
        self.epilog = "sections:\n" + "\n".join(f"  {s.name:<10} {s.what}" for s in SECTIONS)
        return super().format_help()


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m bench", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--section", action="extend", nargs="+", metavar="NAME",
                   choices=[*(s.name for s in SECTIONS), ALL],
                   help=f"the sections to run, in the order above ({ALL}: every one; "
                        f"default: {', '.join(DEFAULT)})")
    p.add_argument("--report-only", action="store_true",
                   help="measure nothing: write each section's part of docs/performance.md "
                        "again from its results file (not the fleet section, whose report "
                        "needs its per-run samples)")
    fleet = p.add_argument_group("fleet, cost and shard")
    fleet.add_argument("--runs", type=int, help="runs per figure, the median kept (fleet: 3, "
                                                "cost: 1, shard: 1)")
    fleet.add_argument("--quick", action="store_true",
                       help="fleet: skip the growth measurements on 1, 2 and 4 spokes")
    fleet.add_argument("--parallel", type=int, default=0,
                       help="fleet: pass --parallel N to every pulumi up/preview/destroy")
    fleet.add_argument("--qps", type=float, default=0,
                       help="fleet: PULUMI_K8S_CLIENT_QPS for the provider (default: its own)")
    fleet.add_argument("--burst", type=int, default=0,
                       help="fleet: PULUMI_K8S_CLIENT_BURST for the provider (default: its own)")
    fleet.add_argument("--binaries", type=binaries_list, metavar="SET[,SET]",
                       help="fleet: the sets of Pulumi binaries install, no-op preview and "
                            "destroy are measured on, each against kubectl (default: "
                            "released,patched; the released set's figures are the ones the "
                            "targets judge)")
    fleet.add_argument("--no-variants", action="store_true",
                       help="cost: skip the engine and provider settings")
    fleet.add_argument("--no-16", action="store_true",
                       help="cost: skip the 16-spoke fleet (4 stacks of 4)")
    pairs = p.add_argument_group("levers and floor")
    pairs.add_argument("--pairs", type=int,
                       help="levers: runs of each setting beside the defaults (3); floor: "
                            "no-op previews of the product (5)")
    shard = p.add_argument_group("shard")
    shard.add_argument("--shard-spokes", type=int, metavar="N",
                       help="shard: spokes in the one stack (20, the most one stack should "
                            "hold); fewer for a quick check, not the shard's figures")
    # Children the sections start, each in a fresh process (bench/program.py).
    p.add_argument("--program-child", type=int, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--floor-child", type=int, metavar="N", help=argparse.SUPPRESS)
    p.add_argument("--program-profile", nargs=2, metavar=("N", "OUT"), help=argparse.SUPPRESS)
    return p


def selected(names: Sequence[str] | None) -> tuple[Section, ...]:
    """The sections to run, in SECTIONS' order, each once."""
    wanted = set(names or DEFAULT)
    return tuple(s for s in SECTIONS if ALL in wanted or s.name in wanted)


def mistake(args: argparse.Namespace, sections: Sequence[Section]) -> str | None:
    """What is wrong with asking for these options with these sections, if anything."""
    names = {s.name for s in sections}
    for option, owners in OPTION_SECTIONS.items():
        if getattr(args, option) not in (None, False, 0) and not names & set(owners):
            return (f"--{option.replace('_', '-')} goes with --section "
                    f"{' or '.join(owners)}")
    for option in ("runs", "pairs", "shard_spokes"):
        if getattr(args, option) is not None and getattr(args, option) < 1:
            return f"--{option.replace('_', '-')} must be at least 1"
    if args.report_only:
        cannot = [s.name for s in sections if not s.rewrites]
        if cannot:
            return f"--report-only: {', '.join(cannot)} cannot be written from its results"
    return None


def child(args: argparse.Namespace) -> bool:
    """Runs the child process asked for, if any; True when it did."""
    if args.program_child is not None:
        from bench.program import program_child
        print(json.dumps(program_child(args.program_child).to_json()))
    elif args.floor_child is not None:
        from bench.program import floor_child
        print(json.dumps(floor_child(args.floor_child)))
    elif args.program_profile:
        from bench.breakdown.program_profile import profile_program
        profile_program(int(args.program_profile[0]), Path(args.program_profile[1]))
    else:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Parses the flags and runs each section asked for; 1 when any failed."""
    cli = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = cli.parse_args(argv)
    if child(args):
        return 0
    sections = selected(args.section)
    problem = mistake(args, sections)
    if problem:
        cli.error(problem)
    signal.signal(signal.SIGTERM, _on_sigterm)
    options = Options(runs=args.runs, pairs=args.pairs, quick=args.quick,
                      parallel=args.parallel, qps=args.qps, burst=args.burst,
                      no_variants=args.no_variants, no_16=args.no_16,
                      report_only=args.report_only, binaries=args.binaries,
                      shard_spokes=args.shard_spokes)
    failed = [s.name for s in sections if s.run(options, command_line(argv)) != 0]
    if failed:
        log(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
