"""`python -m review.verify --stack NAME --reviewed report.json [-- PREVIEW ARGS]`: the
check alone that a run would apply what was reviewed. Runs `pulumi preview` with
KNATIVE_FLEET_REVIEWED set, so the program itself holds its plan to the review's
(fleet.reviewed), exactly as the `pulumi up` that applies it does. Exit 0 when it is
the reviewed plan, 1 naming every difference (or why the preview failed), 2 on usage
errors. `make apply` needs no separate check: its `pulumi up` runs the same one
before it registers anything.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from core.interrupts import restore_sigint
from review import preview
from review.plan_digest import REVIEWED


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m review.verify", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stack", required=True, help="the stack about to be updated")
    p.add_argument("--reviewed", required=True, type=Path, metavar="REPORT_JSON",
                   help="the report.json of the review (python -m review)")
    p.add_argument("preview_args", nargs="*", metavar="PREVIEW ARGS",
                   help="after --: more arguments for pulumi preview")
    return p


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        report = json.loads(args.reviewed.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        cli.error(f"--reviewed {args.reviewed}: not a review report ({exc}); write one "
                  "with python -m review --stack NAME")
    if not isinstance(report, dict) or not isinstance(report.get("plan"), dict):
        cli.error(f"--reviewed {args.reviewed}: it records no plan (an offline review, "
                  "or a review of a recorded preview); only a live review can be applied")
    env = {**os.environ, REVIEWED: str(args.reviewed.resolve())}
    got = preview.run(args.stack, args.preview_args, env=env)
    if got.exit_code == 0:
        print(f"stack {args.stack}: the plan is the reviewed one "
              f"({report['plan'].get('digest')}).")
        return 0
    print(f"stack {args.stack}: refusing to apply (pulumi preview exited "
          f"{got.exit_code}):")
    for diag in got.document.get("diagnostics") or []:
        if diag.get("severity") == "error":
            for line in str(diag.get("message", "")).strip().splitlines():
                print(f"  {line.removeprefix('error: ')}")
    return 1


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
