"""The engine's CPU by Go package: the CPU profile `pulumi ... --profiling PREFIX`
writes (`PREFIX.<pid>.cpu`), read with `go tool pprof -top`; each function's own
(flat) seconds summed per package."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

# "  1.23s  4.56%  7.89%  2.34s  5.67%  pkg/path.(*T).Method"
_ROW = re.compile(r"^\s*([\d.]+)(ms|s)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+(?:ms|s)\s+[\d.]+%\s+(.+)$")


def package_of(function: str) -> str:
    """`github.com/pulumi/pulumi/pkg/v3/resource/deploy.(*x).y` -> `.../resource/deploy`."""
    head, slash, tail = function.rpartition("/")
    return head + slash + tail.split(".", 1)[0]


def parse_top(text: str) -> list[tuple[str, float]]:
    """(function, own seconds) of every row of `go tool pprof -top` output."""
    rows = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            seconds = float(match[1]) / (1000 if match[2] == "ms" else 1)
            rows.append((match[3].strip(), seconds))
    return rows


def by_package(rows: list[tuple[str, float]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for function, seconds in rows:
        out[package_of(function)] += seconds
    return out


def read_profile(go: str, binary: Path, profile: Path) -> list[tuple[str, float]]:
    """Every function's own seconds in the profile (`go tool pprof -top -nodecount=0`)."""
    text = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=0", str(binary),
                           str(profile)], check=True, capture_output=True, text=True).stdout
    return parse_top(text)
