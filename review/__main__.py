"""`python -m review --stack NAME [--out DIR] [--from-json FILE] [-- PREVIEW ARGS]`:
runs `pulumi preview --json` of the stack (or reads a recorded one) and writes
`report.md` (the PR comment) and `report.json` (for tools) into DIR, by default
`.review/<stack>/`. Exit code 0 when the preview succeeded, 1 when it failed (the
report is written all the same), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.interrupts import restore_sigint
from review import preview
from review.markdown import render
from review.report import to_json
from review.summary import summarise


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m review", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stack", required=True, help="the stack to preview")
    p.add_argument("--out", type=Path, help="where to write the reports "
                   "(default: .review/<stack>/)")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="a recorded `pulumi preview --json` (.json or .json.gz) instead "
                   "of running one")
    p.add_argument("preview_args", nargs="*", metavar="PREVIEW ARGS",
                   help="after --: more arguments for pulumi preview")
    return p


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(sys.argv[1:] if argv is None else argv)
    if args.from_json and args.preview_args:
        cli.error("preview arguments make no sense with --from-json")
    if args.from_json and not args.from_json.is_file():
        cli.error(f"--from-json: no such file: {args.from_json}")
    got = preview.load(args.from_json) if args.from_json else \
        preview.run(args.stack, args.preview_args)
    summary = summarise(got.document, got.exit_code, args.stack)
    out = args.out or Path(".review") / args.stack
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render(summary), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(to_json(summary), indent=2,
                                                sort_keys=True) + "\n", encoding="utf-8")
    state = "succeeded" if summary.ok else f"failed (exit code {got.exit_code})"
    print(f"preview of {args.stack} {state}: wrote {out / 'report.md'} and "
          f"{out / 'report.json'}")
    return 0 if summary.ok else 1


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
