"""`python -m operations rights --stack NAME`: the rights this stack's identities need, as
YAML ready to `kubectl apply`: on every spoke, the admission policy that holds the
identity to the release's own roles, bindings and namespaces and its binding, then the
ClusterRole and its binding; on the hub, the Role and its binding in each inventory
namespace. The stack's config is read with `pulumi config --json` (or from a stack file
with `--config FILE`); nothing is read from the hub or a spoke. Several `--stack` and
`--config` give one set of rights that holds all of them (a stack's config before and
after a change that removes objects; two stacks handing a spoke over).

`python -m operations hand-over --spoke NAME --from-stack A --to-stack B`: moves a spoke
from stack A to stack B with no object deleted or re-created (operations.hand_over): A's
state forgets it (a backup kept), then the spoke's owner record names B. Run it in the
project directory, logged in to the stacks' backend.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from config.fleet import parse_fleet_config
from config.identity import subject_of
from config.stack_config import read_stack_config, stack_file_values, values_getter
from core.errors import FleetError
from operations.access_roles import (
    HUB_ROLE,
    SPOKE_ROLE,
    hub_documents,
    spoke_documents,
    spoke_identity,
)
from operations.state_reads import unbound_namespaces, until_up_documents, until_up_note

DEFAULT_HUB_SUBJECT = "User:knative-fleet"
# Outside the project, so a state export is never committed with it.
BACKUP_DIR = Path.home() / ".knative-fleet" / "backups"


def stack_values(stack: str, cwd: Path | None = None) -> dict[str, Any]:
    """{key: value} of the stack's config as `pulumi config --json` gives it (secrets
    stay hidden: no key this command reads is one), in the project directory `cwd`."""
    proc = subprocess.run(["pulumi", "config", "--json", "--stack", stack], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"pulumi config --stack {stack} failed: {proc.stderr.strip()}")
    return {key: item.get("objectValue", item.get("value"))
            for key, item in json.loads(proc.stdout).items()}




def stack_resources(stack: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    """The resources of the stack's state (`pulumi stack export`, secrets hidden)."""
    proc = subprocess.run(["pulumi", "stack", "export", "--stack", stack], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"pulumi stack export --stack {stack} failed: {proc.stderr.strip()}")
    return (json.loads(proc.stdout).get("deployment") or {}).get("resources") or []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m operations", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    rights = sub.add_parser("rights", help="the RBAC this stack's identities need, as YAML")
    rights.add_argument("--stack", action="append", default=[],
                        help="read the stack's config with `pulumi config` (repeatable)")
    rights.add_argument("--config", action="append", type=Path, default=[],
                        help="read a stack file's config instead (repeatable)")
    rights.add_argument("--spoke-subject",
                        help="who the access provider's credentials are for, on each spoke "
                             "(default: the stack's knative-fleet:spokeIdentity, which must "
                             "be the same)")
    rights.add_argument("--hub-subject", default=DEFAULT_HUB_SUBJECT,
                        help=f"who runs the stack, on the hub (default {DEFAULT_HUB_SUBJECT})")
    rights.add_argument("--only", choices=("spoke", "hub"),
                        help="print one side only")
    rights.add_argument("--spoke-role", default=SPOKE_ROLE,
                        help="name of the spoke's admission policy, ClusterRole and their "
                             f"bindings (default {SPOKE_ROLE})")
    rights.add_argument("--hub-role", default=HUB_ROLE,
                        help=f"name of the hub Role and its bindings (default {HUB_ROLE})")
    move = sub.add_parser("hand-over", help="move a spoke from one stack to another, "
                                             "deleting nothing")
    move.add_argument("--spoke", required=True, help="the spoke's name in the fleet")
    move.add_argument("--from-stack", required=True, help="the stack that manages it now")
    move.add_argument("--to-stack", required=True, help="the stack that takes it over")
    move.add_argument("--backup-dir", type=Path, default=BACKUP_DIR,
                      help="where the exported state of --from-stack is kept before the "
                           f"change (default {BACKUP_DIR})")
    args = parser.parse_args(argv)
    if args.cmd == "hand-over":
        return run_hand_over(args)
    if not args.stack and not args.config:
        parser.error("rights: give --stack or --config")
    sources = [stack_values(s) for s in args.stack]
    sources += [stack_file_values(c) for c in args.config]
    try:
        cfg = [parse_fleet_config(read_stack_config(values_getter(v))) for v in sources]
        docs = []
        if args.only != "hub":
            identity = spoke_identity(cfg, args.spoke_subject)
            docs += spoke_documents(cfg, subject_of(identity), args.spoke_role, identity)
            unbound = {s: unbound_namespaces(stack_resources(s)) for s in args.stack}
            unbound = {s: ns for s, ns in unbound.items() if ns}
            if unbound:
                print(until_up_note(unbound, [n for ns in unbound.values() for n in ns],
                                    args.spoke_role), file=sys.stderr)
                docs += until_up_documents(subject_of(identity), args.spoke_role)
        if args.only != "spoke":
            docs += hub_documents(cfg, subject_of(args.hub_subject), args.hub_role)
    except (FleetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    return 0


def run_hand_over(args: argparse.Namespace) -> int:
    return hand_over_spoke(args.spoke, args.from_stack, args.to_stack, args.backup_dir)


def hand_over_spoke(spoke: str, from_stack: str, to_stack: str,
                    backup_dir: Path = BACKUP_DIR, project_dir: Path | None = None) -> int:
    """The hand-over as the CLI runs it, for the project in `project_dir` (default: the
    current directory); prints what it did, returns the exit code."""
    from operations.hand_over import HandOverRefused, hand_over

    try:
        cfg = parse_fleet_config(read_stack_config(values_getter(
            stack_values(from_stack, project_dir))))
        moved = hand_over(spoke, from_stack, to_stack, cfg, backup_dir, cwd=project_dir)
    except (HandOverRefused, FleetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"spoke {spoke!r} is stack {to_stack}'s now. Next: take it out of "
          f"{from_stack}'s config and put it in {to_stack}'s (if not done yet), "
          f"then `pulumi up --stack {to_stack}` adopts every object in place"
          + (f"; the state before is in {moved.backup}" if moved.backup else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
