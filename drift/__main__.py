"""`python -m drift --stack NAME`: the drift check a scheduled job runs (`make drift`).

Runs `pulumi refresh --preview-only --json` (state untouched), prints per spoke every
object that drifted and how, writes the same as JSON, and exits 1 when there is drift,
0 when there is none, 2 when the check itself could not run. The repair is
`pulumi up --refresh` (`make drift-repair`): it reads the live objects and applies the
stack's own again. (README, "Drift".)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from drift.findings import DriftReport, findings, parse_document

NO_DRIFT, DRIFT, FAILED = 0, 1, 2


def refresh_preview(stack: str) -> tuple[int, str]:
    proc = subprocess.run(
        ["pulumi", "refresh", "--preview-only", "--json", "--stack", stack,
         "--non-interactive"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def render(stack: str, report: DriftReport) -> str:
    lines = []
    for spoke, drifts in report.by_spoke().items():
        checked = report.checked.get(spoke, 0)
        if not drifts:
            lines.append(f"{spoke}: no drift ({checked} objects checked)")
            continue
        lines.append(f"{spoke}: {len(drifts)} object(s) drifted ({checked} checked)")
        lines += [f"  {d.line().split(': ', 1)[1]}" for d in drifts]
    if report.drifts:
        lines.append(f"Repair: pulumi up --refresh --stack {stack} (make drift-repair "
                     f"STACK={stack})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drift", description=__doc__)
    parser.add_argument("--stack", required=True)
    parser.add_argument("--out", type=Path, default=None,
                        help="where drift.json goes (default .review/<stack>/)")
    parser.add_argument("--from-json", type=Path, default=None,
                        help="read a recorded `pulumi refresh --preview-only --json`")
    args = parser.parse_args(argv)
    if args.from_json:
        code, text = 0, args.from_json.read_text()
    else:
        code, text = refresh_preview(args.stack)
    try:
        report = findings(parse_document(text))
    except ValueError:
        print(f"drift: the refresh preview of stack {args.stack} failed (exit {code}):\n"
              f"{text[-4000:]}", file=sys.stderr)
        return FAILED
    out = args.out or Path(".review") / args.stack
    out.mkdir(parents=True, exist_ok=True)
    (out / "drift.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    print(render(args.stack, report))
    print(f"drift: written to {out / 'drift.json'}", file=sys.stderr)
    if code != 0 or report.errors:
        for error in report.errors:
            print(f"drift: {error}", file=sys.stderr)
        return FAILED
    return DRIFT if report.drifts else NO_DRIFT


if __name__ == "__main__":
    sys.exit(main())
