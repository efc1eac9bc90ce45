"""`python -m review.verify --stack NAME --reviewed report.json [-- PREVIEW ARGS]`: the
apply path's check that what lands is what was reviewed. Runs a fresh `pulumi preview
--json` and holds its planned steps against the `plan` the review wrote into
report.json (review/plan_digest.py). Exit 0 when they are the same (run `pulumi up`
next), 1 naming every difference when they are not, or when the fresh preview fails,
2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.interrupts import restore_sigint
from review import preview
from review.plan_digest import differences, plan_digest, planned_steps, steps_of


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m review.verify", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stack", required=True, help="the stack about to be updated")
    p.add_argument("--reviewed", required=True, type=Path, metavar="REPORT_JSON",
                   help="the report.json of the review (python -m review)")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="a recorded `pulumi preview --json` instead of running one")
    p.add_argument("preview_args", nargs="*", metavar="PREVIEW ARGS",
                   help="after --: more arguments for pulumi preview")
    return p


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        report = json.loads(args.reviewed.read_text(encoding="utf-8"))
        reviewed = steps_of(report["plan"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        cli.error(f"--reviewed {args.reviewed}: not a review report with a plan ({exc}); "
                  "write one with python -m review --stack NAME")
    if report.get("stack") not in (None, args.stack):
        cli.error(f"--reviewed {args.reviewed} is the review of stack "
                  f"{report.get('stack')!r}, not {args.stack!r}")
    got = preview.load(args.from_json) if args.from_json else \
        preview.run(args.stack, args.preview_args)
    if got.exit_code != 0:
        print(f"stack {args.stack}: the fresh preview failed (exit code {got.exit_code}); "
              "nothing was applied. Run python -m review again to see why.")
        return 1
    fresh = planned_steps(got.document)
    if fresh == reviewed:
        print(f"stack {args.stack}: the fresh preview plans the {len(fresh)} reviewed "
              f"steps ({plan_digest(fresh)}).")
        return 0
    print(f"stack {args.stack}: the fresh preview plans other steps than the review "
          f"({plan_digest(fresh)}, reviewed {report['plan'].get('digest')}); refusing "
          "to apply. Review the stack again (python -m review) and apply what that "
          "review shows:")
    for line in differences(reviewed, fresh):
        print(f"  {line}")
    return 1


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
