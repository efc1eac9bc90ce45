"""The engine's gRPC calls in one no-op preview, from `PULUMI_DEBUG_GRPC=FILE`: what the
provider's `Check` and `Diff` cost per kind of object, and when the run reaches each
stage (the program started, the first and last object, the program done).

The engine takes a registration at a time through its step loop, with a `Check` and a
`Diff` call to the provider for each object, so these calls are the no-op preview's
critical path once the program has declared its resources. The log holds every request
in full (objects, provider configuration): it is read into counts and times here and
deleted by the caller; nothing of its content is kept.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

PER_OBJECT = ("Check", "Diff")
NO_TIME = "0001-01-01"  # calls the log could not time (the server side of a stream)


@dataclass(frozen=True)
class Call:
    """One completed or started call: seconds since the log's first timed call."""

    method: str
    kind: str  # the object's kind for a resource's calls, else ""
    at_s: float
    done: bool
    duration_ms: float


def _kind(request: dict[str, Any]) -> str:
    urn = request.get("urn") or ""
    if "::" not in urn:
        return ""
    return urn.split("::")[-2].split("$")[-1].rsplit(":", 1)[-1]


def read_calls(lines: Iterable[str]) -> list[Call]:
    """The log's calls in order; those without a time are left out."""
    calls: list[Call] = []
    start: datetime | None = None
    for line in lines:
        entry = json.loads(line)
        stamp = entry.get("timestamp") or ""
        if not stamp or stamp.startswith(NO_TIME):
            continue
        at = datetime.fromisoformat(stamp[:26].rstrip("Z") + "+00:00")
        start = start or at
        done = entry.get("progress") == "response_completed"
        calls.append(Call(entry["method"].rsplit("/", 1)[-1],
                          _kind(entry.get("request") or {}), (at - start).total_seconds(),
                          done, entry.get("duration", 0) / 1e6 if done else 0.0))
    return calls


def read_file(path: Path) -> list[Call]:
    with path.open() as fh:
        return read_calls(fh)


def per_kind(calls: Iterable[Call]) -> dict[str, dict[str, list[float]]]:
    """{method: {kind: [count, milliseconds in all]}} of the per-object calls, the
    costliest kinds first."""
    out: dict[str, dict[str, list[float]]] = {m: defaultdict(lambda: [0, 0.0])
                                              for m in PER_OBJECT}
    for call in calls:
        if call.done and call.method in PER_OBJECT and call.kind:
            row = out[call.method][call.kind]
            row[0] += 1
            row[1] += call.duration_ms
    return {m: dict(sorted(rows.items(), key=lambda kv: -kv[1][1])) for m, rows in out.items()}


def _first(calls: Iterable[Call], method: str, done: bool) -> Iterator[float]:
    return (c.at_s for c in calls if c.method == method and c.done is done)


def milestones(calls: list[Call]) -> dict[str, float]:
    """Seconds from the engine's first call to its language host: the program's start,
    the first and the last resource's `Check`, the program's end."""
    checks = [c.at_s for c in calls if c.method == "Check" and not c.done and c.kind]
    return {
        "program_started_s": next(_first(calls, "Run", False), 0.0),
        "first_check_s": min(checks, default=0.0),
        "last_check_s": max(checks, default=0.0),
        "program_done_s": next(_first(calls, "Run", True), 0.0),
    }
