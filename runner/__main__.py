"""`python -m runner OPERATION --stacks PATTERN [options]`: run many stacks ring by ring.

    python -m runner up --stacks 'prod-*'                 every prod stack, ring by ring
    python -m runner up --stacks 'prod-*' --shard 2/4     this CI job's part of each ring
    python -m runner up --stacks 'prod-*' --ring 1        only ring 1 (a CI job per ring)
    python -m runner preview|destroy|refresh --stacks ... the same for the other operations
    python -m runner up ... --approve WAVE --rollback-on-failure --reviewed DIR
                                                          approval, rollback, the reviewed plan
    python -m runner rollback --stacks ...                failed stacks back to their last
                                                          successful config
    python -m runner status [--stacks PATTERN] [--json]   the fleet-wide view
    python -m runner hand-over --spoke S --from-stack A --to-stack B
                                                          move a spoke between shards
    python -m runner operator-stacks --stacks ... --repo URL
                                                          the stacks as Pulumi Kubernetes
                                                          Operator `Stack` objects (YAML)

`refresh` is a drift check: a refresh preview, the state is not written. `up` and
`destroy` stop at the first ring with a failed stack; `preview` and `refresh` report
every ring. Before any stack runs, a run in which two stacks the pattern names (in any
ring or shard) select one spoke is refused. Exit code 0 when every stack succeeded (and,
for refresh, none drifted), 3 when every stack that did not succeed waits for approval,
1 otherwise, 2 when the stacks cannot be chosen as asked or overlap. See docs/runner.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from core.interrupts import restore_sigint
from core.problems import problem_lines
from runner import (
    execution,
    operator_stacks,
    overlap,
    plan,
    selection,
    stack_claims,
    status,
    summary,
)
from runner.progress import Board
from runner.results import OPERATIONS

REPO = Path(__file__).resolve().parent.parent
RUNS_DIR = ".fleet-runs"
USAGE_ERROR = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m runner", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for op in (*OPERATIONS, "status"):
        cmd = sub.add_parser(op, help="the fleet-wide view" if op == "status" else
                             f"{op} of the chosen stacks, ring by ring")
        if op == "status":
            cmd.add_argument("--stacks", default="*", metavar="PATTERN",
                             help="stack names, shell-style (`prod-*`; several: `a-*,b-*`); "
                             "default: every stack")
        else:
            cmd.add_argument("--stacks", required=True, metavar="PATTERN",
                             help="stack names, shell-style (`prod-*`; several: `a-*,b-*`)")
            cmd.add_argument("--shard", type=_shard, metavar="I/N",
                             help="take only shard I of N of every ring (a CI matrix job)")
            cmd.add_argument("--log-dir", type=Path, metavar="DIR",
                             help="where each stack's log goes (default: "
                             f"{RUNS_DIR}/<timestamp>/ in the project directory)")
            cmd.add_argument("--progress-every", type=float, default=10.0, metavar="S",
                             help="at most one progress line per stack every S seconds")
            if op in ("up", "preview"):
                cmd.add_argument("--approve", action="append", metavar="WAVE", default=[],
                                 help="start this wave, which needs approval (README, "
                                 "'Groups and waves'); repeat for several")
            if op == "up":
                cmd.add_argument("--reviewed", type=Path, metavar="DIR",
                                 help="update a stack only when a fresh preview plans the "
                                 "steps of its review, DIR/<stack>/report.json (python -m "
                                 "review --out DIR/<stack>); refuse it otherwise")
                cmd.add_argument("--rollback-on-failure", action="store_true",
                                 help="when a ring fails, return its failed stacks to the "
                                 "config of their last successful update (not a stack "
                                 "waiting for approval; not across a Knative version)")
                cmd.add_argument("--retry-rolled-back", action="store_true",
                                 help="apply a config that failed and was rolled back, "
                                 "unchanged, once more (refused without it)")
        cmd.add_argument("--ring", type=int, action="append", metavar="N",
                         help="only the stacks of ring N (repeat for several rings)")
        cmd.add_argument("--parallel", type=_positive, default=4, metavar="N",
                         help="at most N stacks at once (default 4)")
        cmd.add_argument("--project-dir", type=Path, default=REPO, metavar="DIR",
                         help="the Pulumi project (default: this repository)")
        cmd.add_argument("--json", action="store_true",
                         help="print JSON on stdout (progress goes to stderr)")
    move = sub.add_parser("hand-over", help="move a spoke from one shard stack to another "
                          "with no object deleted or re-created (shard rebalancing; "
                          "python -m operations hand-over)")
    move.add_argument("--spoke", required=True, help="the spoke's name in the fleet")
    move.add_argument("--from-stack", required=True, help="the stack that manages it now")
    move.add_argument("--to-stack", required=True, help="the stack that takes it over")
    move.add_argument("--project-dir", type=Path, default=REPO, metavar="DIR",
                      help="the Pulumi project (default: this repository)")
    ops = sub.add_parser("operator-stacks", help="the chosen stacks as Pulumi Kubernetes "
                         "Operator Stack objects, ring N waiting for ring N-1 (YAML on stdout)")
    ops.add_argument("--stacks", default="*", metavar="PATTERN",
                     help="stack names, shell-style; default: every stack")
    ops.add_argument("--ring", type=int, action="append", metavar="N",
                     help="only the stacks of ring N (repeat for several rings)")
    ops.add_argument("--project-dir", type=Path, default=REPO, metavar="DIR",
                     help="the Pulumi project (default: this repository)")
    fields = operator_stacks.OperatorStackSettings.model_fields
    for name, field in fields.items():
        flag = "--" + name.replace("_", "-")
        default = "" if field.is_required() else f" (default: {field.default!r})"
        ops.add_argument(flag, dest=name, required=field.is_required(),
                         help=f"{field.description or name}{default}")
    return p


def _shard(text: str) -> selection.Shard:
    try:
        return selection.Shard.parse(text)
    except selection.SelectionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def new_run_dir(project_dir: Path) -> Path:
    """`.fleet-runs/<timestamp>/`, a new directory for every run."""
    base = project_dir / RUNS_DIR / time.strftime("%Y%m%d-%H%M%S")
    run_dir, n = base, 1
    while True:
        try:
            run_dir.mkdir(parents=True)
            return run_dir
        except FileExistsError:
            n += 1
            run_dir = base.with_name(f"{base.name}-{n}")


def refuse_overlaps(project_dir: Path, pattern: str, out: Callable[[str], Any]) -> None:
    """Raises SelectionError (exit 2) when two stacks the pattern names, in any ring or
    shard, select one spoke (runner.overlap); read-only, before any stack runs."""
    read = stack_claims.read_selections(project_dir, selection.fleet(project_dir, pattern))
    for note in read.notes:
        out(f"overlap check: {note}")
    found = overlap.overlaps(read.selections)
    if found:
        raise selection.SelectionError(overlap.refusal(found, read.selections))


def run_operation(args: argparse.Namespace, out: Callable[[str], Any]) -> int:
    project_dir = args.project_dir.resolve()
    rings = set(args.ring) if args.ring else None
    stacks = selection.select(project_dir, args.stacks, args.shard, rings)
    if stacks:
        refuse_overlaps(project_dir, args.stacks, out)
    shard = f" (shard {args.shard})" if args.shard else ""
    ordered = plan.rings(stacks)
    if not stacks:
        where = " and ".join(filter(None, [
            f"ring(s) {', '.join(map(str, sorted(rings)))}" if rings else "",
            f"shard {args.shard}" if args.shard else ""]))
        out(f"no stack matching {args.stacks!r} in {where}: nothing to do")
    log_dir = (args.log_dir.resolve() if args.log_dir else new_run_dir(project_dir))
    log_dir.mkdir(parents=True, exist_ok=True)
    out(f"{args.command} of {len(stacks)} stack(s) in {len(ordered)} ring(s){shard}, at "
        f"most {args.parallel} at once; logs in {log_dir}")
    board = Board(out, every_s=args.progress_every,
                  width=max((len(s.name) for s in stacks), default=0))

    approve = getattr(args, "approve", None)
    if approve:  # the stacks' processes inherit it (docs/settings.md)
        os.environ["KNATIVE_FLEET_APPROVE"] = ",".join(approve)
    reviewed = getattr(args, "reviewed", None)

    def run_ring(ring: plan.Ring) -> dict:
        out(f"ring {ring.number}: {', '.join(ring.names)}")
        return execution.run_ring(ring, args.command, project_dir, log_dir, args.parallel,
                                  board, out, reviewed=reviewed.resolve() if reviewed else None,
                                  retry_rolled_back=getattr(args, "retry_rolled_back", False))

    rollout = plan.run_rollout(args.command, ordered, run_ring)
    document = summary.to_json(rollout, str(log_dir))
    rolled_back = None
    failed = summary.to_roll_back(rollout)
    if getattr(args, "rollback_on_failure", False) and failed:
        ring = plan.Ring(rollout.stopped_at or 0, tuple(
            s for r in ordered for s in r.stacks if s.name in {f.stack for f in failed}))
        out(f"rolling back the failed stacks of ring {ring.number}: {', '.join(ring.names)}")
        rolled_back = execution.run_ring(ring, "rollback", project_dir, log_dir,
                                         args.parallel, board, out)
        document["rolledBack"] = {n: r.to_json() for n, r in rolled_back.items()}
    (log_dir / "summary.json").write_text(json.dumps(document, indent=2) + "\n")
    out(summary.render(rollout, str(log_dir)))
    waiting = [r.stack for r in rollout.failed if r.waiting_approval]
    if rolled_back is not None or (getattr(args, "rollback_on_failure", False) and waiting):
        out(summary.render_rollback(rolled_back or {}, waiting))
    if args.json:
        print(json.dumps(document, indent=2))
    return summary.exit_code(rollout)


def run_status(args: argparse.Namespace) -> int:
    project_dir = args.project_dir.resolve()
    stacks = selection.select(project_dir, args.stacks,
                              rings=set(args.ring) if args.ring else None)
    statuses = status.read_fleet(project_dir, stacks, args.parallel)
    if args.json:
        print(json.dumps(status.to_json(statuses), indent=2))
    else:
        print(status.render_table(statuses))
    return 1 if any(s.error for s in statuses) else 0


def run_operator_stacks(args: argparse.Namespace) -> int:
    fields = operator_stacks.OperatorStackSettings.model_fields
    given = {k: getattr(args, k) for k in fields if getattr(args, k) is not None}
    try:
        settings = operator_stacks.OperatorStackSettings.model_validate(given)
    except ValidationError as exc:
        for line in problem_lines(exc):
            key, _, msg = line.partition(": ")
            print(f"python -m runner operator-stacks: --{key.replace('_', '-')}: {msg}",
                  file=sys.stderr)
        return USAGE_ERROR
    project_dir = args.project_dir.resolve()
    stacks = selection.select(project_dir, args.stacks,
                              rings=set(args.ring) if args.ring else None)
    if not stacks:
        raise selection.SelectionError(f"no stack matching {args.stacks!r} in the rings asked")
    print(yaml.safe_dump_all(operator_stacks.stack_objects(stacks, settings),
                             sort_keys=False), end="")
    return 0


def run_hand_over(args: argparse.Namespace) -> int:
    """Shard rebalancing: the fleet's hand-over, from the project directory (README,
    "Moving a spoke between stacks"). Move the spoke in the stacks' selections too, so
    the overlap check and the next rollout agree."""
    from operations.__main__ import hand_over_spoke

    return hand_over_spoke(args.spoke, args.from_stack, args.to_stack,
                           project_dir=args.project_dir.resolve())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)

    def out(line: str) -> None:
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

    try:
        if args.command == "status":
            return run_status(args)
        if args.command == "operator-stacks":
            return run_operator_stacks(args)
        if args.command == "hand-over":
            return run_hand_over(args)
        return run_operation(args, out)
    except selection.SelectionError as exc:
        print(f"python -m runner: {exc}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
