"""What one stack's run gave: the vocabulary the worker, the plan, the progress board
and the summary share.

A stack's failed spokes come from two places, because neither is complete alone: the
run's error diagnostics name the spokes it could not resolve (`spoke 'x': Reason: ...`,
the program's own wording) and the spokes whose objects failed (a spoke's objects are
named `<spoke>:...`); the stack's `spokes` output names those that are unresolved or
not ready as of the last update that wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Operation = Literal["preview", "up", "destroy", "refresh", "rollback"]
# `rollback`: a stack whose newest update failed goes back to the config of its newest
# successful one (runner.rollback); it goes through every ring, like a preview.
OPERATIONS: tuple[Operation, ...] = ("preview", "up", "destroy", "refresh", "rollback")
# Operations that change spokes: a failed ring stops them. Previews and drift checks
# change nothing, so they go on and report every ring.
MUTATING: frozenset[str] = frozenset({"up", "destroy"})

Status = Literal["succeeded", "failed", "not-run"]
SUCCEEDED: Status = "succeeded"
FAILED: Status = "failed"
NOT_RUN: Status = "not-run"

# Resource steps that are not changes: what a drift check or a preview ignores.
UNCHANGED_OPS = frozenset({"same", "read"})

_SPOKE_ERROR = re.compile(r"spoke '([a-z0-9][a-z0-9-]*)': [A-Z][A-Za-z]+:")
# A failed wave names each spoke that failed it on a line of its own (lifecycle.wave_gate).
_WAVE_SPOKE = re.compile(r"^\s+spoke '([a-z0-9][a-z0-9-]*)': ", re.MULTILINE)
# What the SDK and the engine put before a failed step's own reason.
_WRAPPERS = ("error: ", "update failed: ", "create failed: ", "delete failed: ",
             "Exception calling application: ")


@dataclass
class StackResult:
    stack: str
    ring: int
    operation: str
    status: Status
    elapsed_s: float = 0.0
    log: str | None = None
    error: str | None = None  # why it failed, in a few lines
    note: str | None = None  # something a user should know about a stack that did not fail
    changes: dict[str, int] = field(default_factory=dict)  # engine step op -> count
    spokes: dict[str, dict[str, Any]] = field(default_factory=dict)  # `spokes` output
    error_spokes: list[str] = field(default_factory=list)  # spokes the run's errors name

    @property
    def ok(self) -> bool:
        return self.status == SUCCEEDED

    @property
    def drifted(self) -> bool:
        """A drift check (refresh preview) that found objects differing from the state."""
        return self.operation == "refresh" and self.ok and any(
            n for op, n in self.changes.items() if op not in UNCHANGED_OPS)

    @property
    def waiting_approval(self) -> bool:
        """Stopped before a wave that needs a person's approval (README, "Groups and
        waves"): applied up to there, and nothing failed. The program says so itself once
        its outputs are recorded, or the gate's step does (rollout.approval); either way
        the run's only errors are that wave's."""
        lines = _run_errors(self.error or "")
        return self.status == FAILED and bool(lines) and all(
            line.lstrip().startswith("wave '") and "waits for approval" in line
            for line in lines)

    @property
    def failed_spokes(self) -> list[str]:
        """Spokes that failed this stack, by name; empty for a stack that did not fail,
        and for one that only waits for approval (the waiting wave's spokes, in its
        `spokes` output, are not ready when they were never installed, yet nothing of
        theirs failed)."""
        if self.status != FAILED or self.waiting_approval:
            return []
        return sorted(set(self.error_spokes) | set(unhealthy_spokes(self.spokes)))

    def to_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack, "ring": self.ring, "operation": self.operation,
            "status": self.status, "elapsedSeconds": round(self.elapsed_s, 1),
            "log": self.log, "error": self.error, "note": self.note,
            "changes": dict(sorted(self.changes.items())), "drifted": self.drifted,
            "spokes": sorted(self.spokes), "failedSpokes": self.failed_spokes,
            "waitingApproval": self.waiting_approval,
        }


# The engine's own last words on a failed run, and the program's when the engine stopped
# it before it finished registering (the Python SDK's RunError once the resource monitor
# is gone); the lines before them say why.
_GENERIC = ("update failed", "preview failed", "destroy failed",
            "an unhandled error occurred: program exited with non-zero exit code",
            "Resource monitor has terminated, shutting down")


def _run_errors(error: str) -> list[str]:
    """The run-level error lines of a stack's error text (not the spokes' own, not the
    engine's generic ones)."""
    return [line for line in error.splitlines()
            if line.strip() and not line.lstrip().startswith("spoke ")
            and not line.strip().startswith(_GENERIC)]


def not_run(stack: str, ring: int, operation: str, why: str) -> StackResult:
    return StackResult(stack, ring, operation, NOT_RUN, note=why)


def unhealthy_spokes(spokes: Mapping[str, Any]) -> list[str]:
    """Spokes of a `spokes` output that did not resolve or are not ready."""
    bad = []
    for name, out in spokes.items():
        out = out if isinstance(out, Mapping) else {}
        resolved = (out.get("targetClusterResolved") or {}).get("status")
        if resolved != "True" or out.get("ready") is not True:
            bad.append(name)
    return sorted(bad)


def spokes_in_errors(messages: Iterable[str]) -> list[str]:
    """Spokes named by the program's resolution errors (`spoke 'x': Reason: ...`) and by
    a failed wave (a line `  spoke 'x': why` each)."""
    return sorted({m for text in messages
                   for m in _SPOKE_ERROR.findall(text) + _WAVE_SPOKE.findall(text)})


def reason(message: str) -> str:
    """An error as its reason: without the engine's and the SDK's wrapping
    (`error: update failed: Exception calling application: ...`)."""
    text = message.strip()
    while True:
        for prefix in _WRAPPERS:
            if text.startswith(prefix):
                text = text[len(prefix):].lstrip()
                break
        else:
            return text


def command_error_text(exc: BaseException, tail: int = 12) -> str:
    """What a failed Pulumi command said: the end of its stderr, from the SDK's
    `CommandError` text ("code: N / stdout: ... / stderr: ...")."""
    text = str(exc)
    _, sep, stderr = text.rpartition("\n stderr: ")
    lines = [line for line in (stderr if sep else text).splitlines() if line.strip()]
    return "\n".join(lines[-tail:]) or repr(exc)
