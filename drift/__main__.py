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
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from core.interrupts import restore_sigint
from drift.findings import DriftReport, findings, with_refreshed
from review import preview

NO_DRIFT, DRIFT, FAILED = 0, 1, 2


def refresh_preview(stack: str) -> tuple[int, dict]:
    """The refresh preview's document; read as a preview's, so a run that failed before
    the engine started is a document with its error (review.preview.parse). The engine's
    event log goes beside it: the document shows a refresh only with a provider's
    detailed diff, which a dynamic resource (the CRDs-first step) cannot give, and the
    log holds what its refresh read (drift.findings.with_refreshed)."""
    with tempfile.TemporaryDirectory(prefix="knative-fleet-drift-") as scratch:
        log = Path(scratch) / "events.jsonl"
        proc = subprocess.run(
            ["pulumi", "refresh", "--preview-only", "--json", "--event-log", str(log),
             "--stack", stack, "--non-interactive"], capture_output=True, text=True,
            check=False, env={**os.environ, "PULUMI_DEBUG_COMMANDS": "true"})
        document = preview.parse(proc.stdout, proc.stderr, proc.returncode)
        events = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, with_refreshed(document, events)


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
                        help="read a recorded `pulumi refresh --preview-only --json` "
                        "(.json or .json.gz)")
    args = parser.parse_args(argv)
    if args.from_json:
        recorded = preview.load(args.from_json)
        code, document = recorded.exit_code, recorded.document
    else:
        code, document = refresh_preview(args.stack)
    report = findings(document)
    out = args.out or Path(".review") / args.stack
    out.mkdir(parents=True, exist_ok=True)
    (out / "drift.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    print(render(args.stack, report))
    print(f"drift: written to {out / 'drift.json'}", file=sys.stderr)
    if code != 0 or report.errors:
        for error in report.errors or [f"pulumi exited with {code}"]:
            print(f"drift: the check could not run: {error}", file=sys.stderr)
        return FAILED
    return DRIFT if report.drifts else NO_DRIFT


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
