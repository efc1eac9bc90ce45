"""Progress of many stacks at once: one line per stack (stack, step, objects done of
total, elapsed) instead of every engine's output interleaved; the full output of each
stack is in its log file.

`StackProgress` counts one stack's engine events (Automation API `on_event`) in the
stack's own process; `Board` prints the lines in the runner's process. The total is
what the last update left in the state or, when the engine has seen more, what it
has seen: a fresh install's total grows as the program registers its objects.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from review.resources import resource, urn_name
from runner.results import FAILED, SUCCEEDED, StackResult, reason, spokes_in_errors

if TYPE_CHECKING:  # the SDK is loaded in the stacks' processes, not in the runner's
    from pulumi.automation import EngineEvent

# What a step op is doing, for the progress line.
_VERB = {"create": "creating", "update": "updating", "delete": "deleting",
         "replace": "replacing", "create-replacement": "creating",
         "delete-replaced": "deleting", "read": "reading", "refresh": "refreshing",
         "import": "importing", "discard": "discarding"}
# Step ops of a summary that do not leave a resource in the state.
_GONE = frozenset({"delete", "delete-replaced", "discard", "read-discard",
                   "remove-pending-replace"})


def resources_after(kind: str | None, changes: Mapping[str, int] | None) -> int | None:
    """How many resources an update left in the state, from its summary (history);
    None when unknown. A destroy leaves none."""
    if kind is None or changes is None:
        return None
    if kind == "destroy":
        return 0
    return sum(n for op, n in changes.items() if op not in _GONE)


@dataclass(frozen=True)
class Snapshot:
    """One stack's progress at a moment: what the board prints."""

    stack: str
    step: str
    done: int
    total: int | None
    failed: int = 0


class StackProgress:
    """Counts one stack's engine events: objects started, done and failed, the step
    it is at, and the errors it reported (for the summary)."""

    def __init__(self, stack: str, expected: int | None = None) -> None:
        self.stack = stack
        self.expected = expected
        self.step = "starting"
        self.started: set[str] = set()
        self.done: set[str] = set()
        self.failed: set[str] = set()
        self.errors: list[str] = []
        self.error_urns: set[str] = set()
        self.changes: dict[str, int] | None = None

    @property
    def total(self) -> int | None:
        if self.expected is None and not self.started:
            return None
        return max(self.expected or 0, len(self.started))

    def snapshot(self) -> Snapshot:
        return Snapshot(self.stack, self.step, len(self.done), self.total, len(self.failed))

    def apply(self, event: EngineEvent) -> None:
        if event.prelude_event is not None:
            self.step = "running the program"
        elif event.resource_pre_event is not None:
            meta = event.resource_pre_event.metadata
            self.started.add(meta.urn)
            op = str(getattr(meta.op, "value", meta.op))
            if op in _VERB:
                verb = f"would {op}" if event.resource_pre_event.planning else _VERB[op]
                self.step = f"{verb} {urn_name(meta.urn)}"
        elif event.res_outputs_event is not None:
            self.done.add(event.res_outputs_event.metadata.urn)
        elif event.res_op_failed_event is not None:
            urn = event.res_op_failed_event.metadata.urn
            self.failed.add(urn)
            self.done.add(urn)
            self.step = f"failed {urn_name(urn)}"
        elif event.diagnostic_event is not None:
            diag = event.diagnostic_event
            if diag.severity == "error":
                text = reason(diag.message)
                if text and text not in self.errors:
                    self.errors.append(text)
                if diag.urn:
                    self.error_urns.add(diag.urn)
        elif event.summary_event is not None:
            self.changes = {str(getattr(op, "value", op)): n
                            for op, n in event.summary_event.resource_changes.items()}
            self.step = "finished"

    def error_spokes(self) -> list[str]:
        """Spokes the run's errors name: in their text, or as the owner of an object
        that failed (`<spoke>:...`)."""
        named = set(spokes_in_errors(self.errors))
        for urn in self.failed | self.error_urns:
            spoke = resource({"urn": urn}).spoke
            if spoke:
                named.add(spoke)
        return sorted(named)


# Pulumi's own last error of every failed program; the errors before it say why.
PROGRAM_FAILED = "an unhandled error occurred: program exited with non-zero exit code"


def error_text(errors: list[str]) -> str:
    """A run's error diagnostics as the reason it failed, without Pulumi's generic
    last line when there is anything more telling."""
    telling = [e for e in errors if not e.startswith(PROGRAM_FAILED)]
    return "\n".join(telling or errors)


def elapsed(seconds: float) -> str:
    """`8s`, `1m12s`, `1h02m`: short enough for a progress line."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_line(snap: Snapshot, operation: str, seconds: float, width: int = 0) -> str:
    objects = f"{snap.done}/{snap.total if snap.total is not None else '?'} objects"
    failed = f", {snap.failed} failed" if snap.failed else ""
    return (f"  {snap.stack:<{width}}  {operation}  {objects}{failed}  {elapsed(seconds)}"
            f"  {snap.step}")


def result_line(result: StackResult, width: int = 0) -> str:
    word = {SUCCEEDED: "succeeded", FAILED: "FAILED"}.get(result.status, result.status)
    if result.drifted:
        word = "DRIFTED"
    changes = ", ".join(f"{n} {op}" for op, n in sorted(result.changes.items()) if n)
    tail = f"  ({changes})" if changes else ""
    line = (f"  {result.stack:<{width}}  {result.operation} {word} in "
            f"{elapsed(result.elapsed_s)}{tail}")
    if result.note:
        line += f"; {result.note}"
    return line


class Board:
    """Prints the progress of every running stack: a line when a stack starts, at most
    one line per stack every `every_s` seconds while its count or step changes (at
    once when an object fails), and a line when it ends."""

    def __init__(self, write: Callable[[str], Any], every_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic, width: int = 0) -> None:
        self.write = write
        self.every_s = every_s
        self.clock = clock
        self.width = width
        self._start: dict[str, float] = {}
        self._printed: dict[str, tuple[float, Snapshot | None]] = {}
        self._operation: dict[str, str] = {}

    def started(self, stack: str, ring: int, operation: str, log: str) -> None:
        now = self.clock()
        self._start[stack] = now
        self._printed[stack] = (now, None)
        self._operation[stack] = operation
        self.write(f"  {stack:<{self.width}}  {operation} started (ring {ring}); log: {log}")

    def update(self, snap: Snapshot) -> None:
        now = self.clock()
        last_at, last = self._printed.get(snap.stack, (now, None))
        if snap == last:
            return
        new_failure = last is not None and snap.failed > last.failed
        if not new_failure and now - last_at < self.every_s:
            return
        self._printed[snap.stack] = (now, snap)
        seconds = now - self._start.get(snap.stack, now)
        self.write(progress_line(snap, self._operation.get(snap.stack, ""), seconds,
                                 self.width))

    def finished(self, result: StackResult) -> None:
        self.write(result_line(result, self.width))
        if result.status == FAILED and result.log:
            self.write(f"  {'':<{self.width}}  full log: {result.log}")
