"""`python -m review --stack NAME [--out DIR] [--from-json FILE] [-- PREVIEW ARGS]`:
runs `pulumi preview --json` of the stack (or reads a recorded one) and writes
`report.md` (the PR comment) and `report.json` (for tools) into DIR, by default
`.review/<stack>/`. Exit code 0 when the preview succeeded, 1 when it failed (the
report is written all the same), 2 on usage errors.

`python -m review --stack NAME --offline --profiles FILE --state FILE`: the same
report without the hub or any spoke, from the stack file, a ClusterProfile snapshot and
`pulumi stack export` (docs/review.md, "Offline review").
`python -m review profiles --stack NAME > profiles.json`: that snapshot, read from the
hub with a read-only credential.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.errors import FleetError
from core.interrupts import restore_sigint
from review import preview
from review.markdown import LIMIT, render
from review.plan_digest import plan_line, recording
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
    off = p.add_argument_group("offline review (no hub, no spoke)")
    off.add_argument("--offline", action="store_true",
                     help="render from files instead of running pulumi preview")
    off.add_argument("--profiles", type=Path, metavar="FILE",
                     help="the ClusterProfile snapshot (python -m review profiles)")
    off.add_argument("--state", type=Path, metavar="FILE",
                     help="the stack's last state (pulumi stack export --file FILE)")
    off.add_argument("--config", type=Path, metavar="FILE",
                     help="the stack file (default: stacks/Pulumi.<stack>.yaml)")
    off.add_argument("--owner", help="the stack's owner identity (default: the one the "
                     "state records)")
    return p


def profiles_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m review profiles",
        description="Print the ClusterProfiles of the stack's inventory namespaces as the "
        "snapshot the offline review reads (read-only: get and list on the hub).")
    p.add_argument("--stack", required=True)
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="the stack file (default: stacks/Pulumi.<stack>.yaml)")
    p.add_argument("--kubeconfig", help="a hub kubeconfig (default: the stack's hub)")
    p.add_argument("--context", help="its context")
    return p


def profiles_main(argv: list[str]) -> int:
    # Imported here, as in offline_main: a live review loads neither config nor planner.
    from config.fleet import parse_fleet_config
    from config.stack_config import read_stack_config
    from review.offline import config_getter, stack_file
    from review.offline.profiles import take_snapshot

    args = profiles_parser().parse_args(argv)
    path = stack_file(args.stack, args.config)
    if not path.is_file():
        profiles_parser().error(f"no such stack file: {path}")
    try:
        cfg = parse_fleet_config(read_stack_config(config_getter(path)))
        snapshot = take_snapshot(cfg, args.kubeconfig, args.context)
    except FleetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(snapshot.to_json(), indent=1, sort_keys=True) + "\n")
    print(f"{len(snapshot.profiles)} ClusterProfile(s) of {', '.join(snapshot.namespaces)}",
          file=sys.stderr)
    return 0


def write(out: Path, text: str, report: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text, encoding="utf-8")
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n",
                                     encoding="utf-8")


def offline_main(cli: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    # Imported here: the offline review runs the planner, a live review needs none of it.
    from review.offline import markdown, review_offline, stack_file

    if args.from_json or args.preview_args:
        cli.error("--offline reads no preview: drop --from-json and the preview arguments")
    for name in ("profiles", "state"):
        if getattr(args, name) is None:
            cli.error(f"--offline needs --{name}")
        if not getattr(args, name).is_file():
            cli.error(f"--{name}: no such file: {getattr(args, name)}")
    config = stack_file(args.stack, args.config)
    if not config.is_file():
        cli.error(f"no such stack file: {config} (--config)")
    got = review_offline(args.stack, config, args.profiles, args.state, args.owner)
    out = args.out or Path(".review") / args.stack
    write(out, markdown(got), {**to_json(got.summary), "offline": got.offline_json()})
    state = "succeeded" if got.summary.ok else "failed"
    print(f"offline review of {args.stack} {state}: wrote {out / 'report.md'} and "
          f"{out / 'report.json'}")
    return 0 if got.summary.ok else 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["profiles"]:
        return profiles_main(argv[1:])
    cli = parser()
    args = cli.parse_args(argv)
    if args.offline:
        return offline_main(cli, args)
    if args.profiles or args.state or args.config or args.owner:
        cli.error("--profiles, --state, --config and --owner need --offline")
    if args.from_json and args.preview_args:
        cli.error("preview arguments make no sense with --from-json")
    if args.from_json and not args.from_json.is_file():
        cli.error(f"--from-json: no such file: {args.from_json}")
    if args.from_json:
        got, plan = preview.load(args.from_json), None
    else:
        got, plan = recording(lambda env: preview.run(args.stack, args.preview_args, env=env))
    summary = summarise(got.document, got.exit_code, args.stack)
    out = args.out or Path(".review") / args.stack
    line = plan_line(plan) if not args.from_json else ""
    write(out, render(summary, LIMIT - len(line)) + line, {**to_json(summary), "plan": plan})
    state = "succeeded" if summary.ok else f"failed (exit code {got.exit_code})"
    print(f"preview of {args.stack} {state}: wrote {out / 'report.md'} and "
          f"{out / 'report.json'}")
    return 0 if summary.ok else 1


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main())
