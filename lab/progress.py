"""Runs a Pulumi command for a person watching: the full output goes to a log file,
the terminal gets a line per spoke as its objects settle, then Pulumi's own summary
(diagnostics, outputs, resource counts, duration).

    python -m lab.progress LOGFILE -- pulumi up ...
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from core.interrupts import restore_sigint

# One finished step of Pulumi's non-interactive output, e.g.
#  +  kubernetes:core/v1:ConfigMap spoke-1:knative-serving/config-network created (0.41s)
STEP = re.compile(
    r"^\s*[-+~<>=*]+\s+\S+\s+(?P<spoke>[a-z0-9][a-z0-9-]*):\S+\s+"
    r"(?P<verb>created|updated|deleted|replaced|read|[a-z]+ing failed)\b")
# Pulumi's summary starts with one of these headers; from there every line is shown.
SUMMARY = ("Diagnostics:", "Outputs:", "Resources:")
REPORT_EVERY_S = 5.0


def summarize(lines: Iterable[str], now=time.monotonic) -> Iterator[str]:
    """Terminal lines for Pulumi output lines: per-spoke counts at most every few
    seconds while objects settle, then the summary verbatim."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    dirty: set[str] = set()
    last = now()
    in_summary = False
    for line in lines:
        line = line.rstrip("\n")
        if in_summary or line.strip() in SUMMARY:
            if not in_summary:
                yield from _report(counts, dirty)
                in_summary = True
            yield line
            continue
        match = STEP.match(line)
        if match:
            verb = "failed" if match["verb"].endswith("failed") else match["verb"]
            counts[match["spoke"]][verb] += 1
            dirty.add(match["spoke"])
            if verb == "failed":
                yield line.strip()
        if dirty and now() - last >= REPORT_EVERY_S:
            yield from _report(counts, dirty)
            last = now()
    if not in_summary:
        yield from _report(counts, dirty)


def _report(counts: dict[str, Counter[str]], dirty: set[str]) -> Iterator[str]:
    for spoke in sorted(dirty):
        done = ", ".join(f"{n} {verb}" for verb, n in sorted(counts[spoke].items()))
        yield f"  {spoke}: {done}"
    dirty.clear()


def main(argv: list[str]) -> int:
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
    return code


if __name__ == "__main__":
    restore_sigint()  # Pulumi stops its plugins with SIGINT (core/interrupts.py)
    sys.exit(main(sys.argv[1:]))
