"""`python -m fleet rights --stack NAME`: the RBAC this stack's identities need, as YAML
ready to `kubectl apply`: the spoke ClusterRole and its binding (apply on every spoke),
then the hub Role and its binding in each inventory namespace (apply on the hub).

The stack's config is read with `pulumi config --json` (or from a stack file with
`--config FILE`); nothing is read from the hub or a spoke.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from config.fleet import CONFIG_NAMESPACE, parse_fleet_config
from config.stack_config import read_stack_config
from core.errors import FleetError
from fleet.access_roles import HUB_ROLE, SPOKE_ROLE, hub_documents, spoke_documents, subject

DEFAULT_SPOKE_SUBJECT = "ServiceAccount:kube-system/knative-fleet-spoke"
DEFAULT_HUB_SUBJECT = "User:knative-fleet"


def stack_values(stack: str) -> dict[str, Any]:
    """{key: value} of the stack's config as `pulumi config --json` gives it (secrets
    stay hidden: no key this command reads is one)."""
    proc = subprocess.run(["pulumi", "config", "--json", "--stack", stack],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"pulumi config --stack {stack} failed: {proc.stderr.strip()}")
    return {key: item.get("objectValue", item.get("value"))
            for key, item in json.loads(proc.stdout).items()}


def file_values(path: Path) -> dict[str, Any]:
    """{key: value} of a stack file's `config:` (or of a file holding the keys alone)."""
    doc = yaml.safe_load(path.read_text()) or {}
    return doc.get("config", doc)


def getter(values: dict[str, Any]) -> Any:
    def get(key: str) -> str | None:
        value = values.get(f"{CONFIG_NAMESPACE}:{key}")
        if value is None or isinstance(value, dict) and "secure" in value:
            return None
        return value if isinstance(value, str) else json.dumps(value)
    return get


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    rights = sub.add_parser("rights", help="the RBAC this stack's identities need, as YAML")
    where = rights.add_mutually_exclusive_group(required=True)
    where.add_argument("--stack", help="read the stack's config with `pulumi config`")
    where.add_argument("--config", type=Path, help="read a stack file's config instead")
    rights.add_argument("--spoke-subject", default=DEFAULT_SPOKE_SUBJECT,
                        help="who the access provider's credentials are for, on each spoke "
                             f"(default {DEFAULT_SPOKE_SUBJECT})")
    rights.add_argument("--hub-subject", default=DEFAULT_HUB_SUBJECT,
                        help=f"who runs the stack, on the hub (default {DEFAULT_HUB_SUBJECT})")
    rights.add_argument("--only", choices=("spoke", "hub"),
                        help="print one side only")
    rights.add_argument("--spoke-role", default=SPOKE_ROLE,
                        help=f"name of the spoke ClusterRole and binding (default {SPOKE_ROLE})")
    rights.add_argument("--hub-role", default=HUB_ROLE,
                        help=f"name of the hub Role and its bindings (default {HUB_ROLE})")
    args = parser.parse_args(argv)
    values = stack_values(args.stack) if args.stack else file_values(args.config)
    try:
        cfg = parse_fleet_config(read_stack_config(getter(values)))
        docs = []
        if args.only != "hub":
            docs += spoke_documents(cfg, subject(args.spoke_subject), args.spoke_role)
        if args.only != "spoke":
            docs += hub_documents(cfg, subject(args.hub_subject), args.hub_role)
    except (FleetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
