"""The Python program's CPU by area: `deploy()` for N spokes under Pulumi's mocks
(bench.program) run under cProfile, its functions' own time summed per area (our
packages, the Pulumi SDK, pulumi_kubernetes, gRPC and protobuf, asyncio, the rest)."""

from __future__ import annotations

import cProfile
import os
import pstats
from collections import Counter
from pathlib import Path

from lab.paths import REPO

# (area, what a function's file path contains), first match wins.
AREAS: tuple[tuple[str, str], ...] = (
    ("pulumi_kubernetes", f"{os.sep}pulumi_kubernetes{os.sep}"),
    ("Pulumi SDK", f"{os.sep}pulumi{os.sep}"),
    ("gRPC and protobuf", f"{os.sep}grpc{os.sep}"),
    ("gRPC and protobuf", f"{os.sep}google{os.sep}protobuf{os.sep}"),
    ("asyncio", f"{os.sep}asyncio{os.sep}"),
    ("copy and YAML", f"{os.sep}copy.py"),
    ("copy and YAML", f"{os.sep}yaml{os.sep}"),
)


def area(filename: str) -> str:
    """The area a function's file belongs to; knative-fleet's by top-level package."""
    for name, part in AREAS:
        if part in filename:
            return name
    if filename.startswith(str(REPO)) and ".venv" not in filename:
        top = Path(filename).relative_to(REPO).parts[0]
        return f"knative-fleet: {top.removesuffix('.py')}"
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"  # C functions: time spent in them, called from anywhere
    return "other Python"


def areas(stats: pstats.Stats) -> Counter[str]:
    """Own (tottime) seconds per area: they add up to the whole profile."""
    out: Counter[str] = Counter()
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        out[area(filename)] += tottime
    return out


def top_functions(stats: pstats.Stats, n: int = 15) -> list[tuple[str, float, int]]:
    """(function, own seconds, calls) of the `n` functions with the most own time."""
    rows = []
    for (filename, line, name), (_, calls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        short = filename.replace(str(REPO) + os.sep, "")
        short = short.split("site-packages" + os.sep)[-1]
        rows.append((f"{short}:{line} {name}", tottime, calls))
    return sorted(rows, key=lambda r: -r[1])[:n]


def profile_program(spokes: int, out: Path) -> None:
    """Runs the program for `spokes` spokes under mocks and cProfile; stats to `out`."""
    from bench.program import program_child

    profiler = cProfile.Profile()
    profiler.enable()
    program_child(spokes)
    profiler.disable()
    profiler.dump_stats(str(out))
