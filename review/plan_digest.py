"""What a review planned, bound to what lands: the preview's steps as (operation, URN,
digest of the planned inputs), and one digest over them all.

Pulumi's update plans cannot carry a review to the `up` (an anchor's uid is unknown
at preview, so the plan's constraint fails at apply). Instead the review records its
steps; just before `up`, a fresh preview's steps are held against them, and any
difference (a change pushed after the review, a spoke newly selected, a version
moved) refuses the apply and is named. Values the engine only knows at apply are
`<computed>` on both sides, secret values are compared as `[secret]`, and the
providers' own steps (credentials that rotate) are left out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The engine's stand-in for a value only known after apply, in `pulumi preview --json`.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
COMPUTED = "<computed>"
UNPLANNED_OPS = frozenset({"same", "read", "refresh", "discard", "discard-replaced"})
LEFT_OUT_TYPES = ("pulumi:providers:", "pulumi:pulumi:Stack")


@dataclass(frozen=True, order=True)
class PlannedStep:
    op: str
    urn: str
    inputs: str  # sha256 of the planned inputs ("" for a delete)

    def describe(self) -> str:
        kind, _, name = self.urn.rpartition("::")
        return f"{self.op} {kind.rsplit('$', 1)[-1].rsplit('::', 1)[-1]} {name}"


def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return COMPUTED if value == UNKNOWN else value
    if isinstance(value, Mapping):
        return {k: _normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


def inputs_digest(inputs: Mapping[str, Any] | None) -> str:
    if inputs is None:
        return ""
    text = json.dumps(_normalised(inputs), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def planned_steps(document: Mapping[str, Any]) -> list[PlannedStep]:
    """The preview's steps that change something, in a stable order."""
    steps = []
    for step in document.get("steps") or []:
        op, urn = step.get("op", ""), step.get("urn", "")
        if op in UNPLANNED_OPS or any(t in urn for t in LEFT_OUT_TYPES):
            continue
        new = step.get("newState") or {}
        steps.append(PlannedStep(op, urn, inputs_digest(
            None if op.startswith("delete") else new.get("inputs"))))
    return sorted(steps)


def plan_digest(steps: Iterable[PlannedStep]) -> str:
    h = hashlib.sha256()
    for s in steps:
        h.update(f"{s.op}\t{s.urn}\t{s.inputs}\n".encode())
    return "sha256:" + h.hexdigest()


def plan_json(document: Mapping[str, Any]) -> dict[str, Any]:
    """`report.json`'s `plan`: the digest and the steps it covers."""
    steps = planned_steps(document)
    return {"digest": plan_digest(steps),
            "steps": [{"op": s.op, "urn": s.urn, "inputs": s.inputs} for s in steps]}


def steps_of(plan: Mapping[str, Any]) -> list[PlannedStep]:
    return sorted(PlannedStep(s["op"], s["urn"], s["inputs"]) for s in plan["steps"])


def differences(reviewed: Iterable[PlannedStep], fresh: Iterable[PlannedStep],
                shown: int = 20) -> list[str]:
    """What the fresh preview plans that the review did not, and the other way round,
    one line each (at most `shown` of each kind, then a count)."""
    old = {(s.op, s.urn): s for s in reviewed}
    new = {(s.op, s.urn): s for s in fresh}
    lines = {
        "not reviewed": [new[k].describe() for k in sorted(new.keys() - old.keys())],
        "reviewed, no longer planned": [old[k].describe()
                                        for k in sorted(old.keys() - new.keys())],
        "planned with other values than reviewed": [
            new[k].describe() for k in sorted(new.keys() & old.keys())
            if new[k].inputs != old[k].inputs],
    }
    out = []
    for label, items in lines.items():
        for item in items[:shown]:
            out.append(f"{label}: {item}")
        if len(items) > shown:
            out.append(f"{label}: {len(items) - shown} more")
    return out


def plan_line(plan: Mapping[str, Any]) -> str:
    """The report's last line: the digest `make apply` and `runner up --reviewed` hold
    the fresh preview against."""
    return (f"\n\n<sub>Plan digest `{plan['digest']}` ({len(plan['steps'])} steps): "
            "`make apply` and `python -m runner up --reviewed` apply only this plan.</sub>\n")
