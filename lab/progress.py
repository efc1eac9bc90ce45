"""Runs a Pulumi command for a person watching: the full output goes to a log file,
the terminal gets a line per spoke when its component is done (and every failed step),
then Pulumi's summary without its outputs, and the spokes' outputs as one line each.

    python -m lab.progress LOGFILE [--outputs STACK] -- pulumi up ...
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from core.interrupts import restore_sigint

# One finished step of Pulumi's non-interactive output, e.g.
#  +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network created (0.41s)
STEP = re.compile(
    r"^\s*[-+~<>=*]+\s+\S+\s+(?P<spoke>[a-z0-9][a-z0-9-]*):\S+\s+"
    r"(?P<verb>created|updated|deleted|replaced|read|[a-z]+ing failed)\b")
# A spoke's component done, e.g.  +  knative-fleet:index:Spoke spoke-1 created (95s)
SPOKE_DONE = re.compile(
    r"^\s*[-+~<>=*]+\s+knative-fleet:index:Spoke\s+(?P<spoke>[a-z0-9][a-z0-9-]*)\s+"
    r"(?P<verb>created|updated|deleted|[a-z]+ing failed)(?:\s+\((?P<took>[^)]*)\))?")
# A diagnostic's resource header, e.g.
#   kubernetes:core/v1:ConfigMap (spoke-1:knative-serving/config-autoscaler):
DIAGNOSTIC_OF = re.compile(r"^\s+\S+:\S+ \((?P<spoke>[a-z0-9][a-z0-9-]*):(?P<object>[^)\s]+)\):$")
# What an admission webhook of the spoke answered when it refused an object, and the API
# server's words when the webhook did not answer (failurePolicy Fail refuses then too).
REFUSED = re.compile(r'admission webhook "(?P<webhook>[^"]+)" denied the request: (?P<why>.*)$')
UNANSWERED = re.compile(r'failed calling webhook "(?P<webhook>[^"]+)": (?P<why>.*)$')
# Pulumi's summary starts with one of these headers; from there its lines are shown,
# but for the outputs (shown one line a spoke after the run instead).
SUMMARY = ("Diagnostics:", "Outputs:", "Resources:")


def summarize(lines: Iterable[str]) -> Iterator[str]:
    """Terminal lines for Pulumi output lines: each spoke's counts once, when its
    component is done, every failed step, then the summary without its outputs."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    in_summary = False
    section = ""
    of: re.Match[str] | None = None
    refusals: list[str] = []
    for line in lines:
        line = line.rstrip("\n")
        if in_summary or line.strip() in SUMMARY:
            if not in_summary:
                yield from _report(counts, sorted(counts))
                in_summary = True
            if line and not line[0].isspace():
                section = line.strip()
                if section == "Outputs:" and refusals:
                    yield from _refused(refusals)
                    refusals = []
            of = DIAGNOSTIC_OF.match(line) or of
            refused = REFUSED.search(line)
            unanswered = UNANSWERED.search(line)
            if refused and of is not None:
                refusals.append(f"  {of['spoke']}: {of['object']} refused by Knative's webhook "
                                f"{refused['webhook']}: {refused['why']}")
            elif unanswered and of is not None:
                refusals.append(
                    f"  {of['spoke']}: {of['object']} refused: Knative's webhook "
                    f"{unanswered['webhook']} did not answer ({unanswered['why']}); run again "
                    "once its Deployment is Available")
            if section != "Outputs:":
                yield line
            continue
        done = SPOKE_DONE.match(line)
        if done:
            took = f" in {done['took']}" if done["took"] else ""
            yield from _report(counts, [done["spoke"]], took)
            continue
        match = STEP.match(line)
        if match:
            verb = "failed" if match["verb"].endswith("failed") else match["verb"]
            counts[match["spoke"]][verb] += 1
            if verb == "failed":
                yield line.strip()
    if not in_summary:
        yield from _report(counts, sorted(counts))
    yield from _refused(refusals)


def _refused(refusals: list[str]) -> Iterator[str]:
    """One line per object a spoke's admission webhook refused, with the webhook's own
    words: the spoke, what to fix and why, under Pulumi's diagnostics."""
    if refusals:
        yield ("Refused on the spokes (a value a webhook refused: fix it in the stack's "
               "config, then run again):")
        yield from dict.fromkeys(refusals)


def _report(counts: dict[str, Counter[str]], spokes: list[str], took: str = "") -> Iterator[str]:
    for spoke in spokes:
        done = ", ".join(f"{n} {verb}" for verb, n in sorted(counts.pop(spoke, {}).items()))
        yield f"  {spoke}: {done or 'nothing to change'}{took}"


def spoke_lines(spokes: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    """The stack's `spokes` output, one line a spoke."""
    for name, out in sorted(spokes.items()):
        cond = out.get("targetClusterResolved") or {}
        parts = [f"{name}:", "ready" if out.get("ready") else "NOT ready"]
        parts += [f"{c} {out[c]}" for c in ("serving", "eventing") if out.get(c)]
        parts.append(f"TargetClusterResolved={cond.get('status', '?')}"
                     + (f" ({cond['reason']})" if cond.get("status") != "True"
                        and cond.get("reason") else ""))
        if out.get("server"):
            parts.append(str(out["server"]))
        yield "  " + " ".join(parts)


def show_outputs(stack: str) -> None:
    proc = subprocess.run(["pulumi", "stack", "output", "--stack", stack, "--json", "spokes"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"pulumi stack output --stack {stack}: {proc.stderr.strip()}", flush=True)
        return
    print("Spokes:", flush=True)
    for line in spoke_lines(json.loads(proc.stdout or "{}")):
        print(line, flush=True)


def main(argv: list[str]) -> int:
    stack = None
    if len(argv) > 2 and argv[1] == "--outputs":
        stack, argv = argv[2], [argv[0], *argv[3:]]
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    log = Path(argv[0])
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"{' '.join(argv[2:4])}: full log in {log}", flush=True)
    with log.open("w") as out:
        proc = subprocess.Popen(argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1)
        assert proc.stdout is not None

        def tee() -> Iterator[str]:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                yield line

        for shown in summarize(tee()):
            print(shown, flush=True)
        code = proc.wait()
    if code:
        print(f"failed (exit {code}); full log: {log}", flush=True)
    elif stack:
        show_outputs(stack)
    return code


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main(sys.argv[1:]))
