"""One operation on one stack, in a process of its own, through Pulumi's Automation API.

One process per stack, as Pulumi recommends for the Python Automation API: the SDK keeps
process-wide state (the working directory, the engine connection, environment
variables), so two stacks in one process can step on each other. The stack is the
project's local program (`LocalWorkspace` on the project directory, whose Pulumi.yaml
says where the stack files are); the environment (backend URL, passphrase, PULUMI_HOME,
PATH with the toolchain) is the runner's own, inherited.

The engine's whole output goes to the stack's log file; the runner's process gets
progress snapshots and, at the end, the `StackResult`, over a queue.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import NotReviewed, Refused
from runner.progress import Snapshot, StackProgress, error_text, resources_after
from runner.results import FAILED, SUCCEEDED, StackResult, command_error_text
from runner.rollback import (
    RollbackPlan,
    RollbackRefused,
    entries,
    file_values,
    plan_rollback,
    retry_refusal,
    stack_file,
    write_back,
)

SEND_EVERY_S = 0.5


@dataclass(frozen=True)
class Job:
    stack: str
    ring: int
    operation: str
    project_dir: str
    log_path: str
    # `up` only when a fresh preview plans the steps of this review (report.json).
    reviewed: str | None = None
    # `up` of a config that failed and was rolled back (runner.rollback) is allowed.
    retry_rolled_back: bool = False


Report = Callable[[Snapshot], None]


def main(job: Job, queue: Any) -> None:
    """The process's entry point (multiprocessing, 'spawn'): runs the job and puts
    `("progress", snapshot)` messages, then exactly one `("result", result)`."""
    started = time.monotonic()
    # Ctrl-C reaches Pulumi too, which ends the update cleanly: wait for it, and say so.
    interrupted = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    try:
        result = run(job, lambda snap: queue.put(("progress", snap)))
    except BaseException as exc:  # noqa: BLE001 - any failure is this stack's result
        result = StackResult(job.stack, job.ring, job.operation, FAILED,
                             error=f"{type(exc).__name__}: {exc}")
    if interrupted.is_set() and result.status == FAILED:
        result.error = f"interrupted (Ctrl-C): {result.error}"
    result.elapsed_s = time.monotonic() - started
    result.log = job.log_path
    queue.put(("result", result))


class _Log:
    """The stack's log file, written from the SDK's stdout, stderr and event threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        with self._lock:
            self._file.write(line.rstrip("\n") + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


class _Throttle:
    """Sends a snapshot when something changed, at most every SEND_EVERY_S seconds
    (at once when an object failed): thousands of events must not flood the queue."""

    def __init__(self, progress: StackProgress, report: Report) -> None:
        self.progress = progress
        self.report = report
        self._last: Snapshot | None = None
        self._at = 0.0
        self._lock = threading.Lock()

    def __call__(self, force: bool = False) -> None:
        with self._lock:
            snap = self.progress.snapshot()
            now = time.monotonic()
            if snap == self._last:
                return
            failed_more = self._last is not None and snap.failed > self._last.failed
            if force or failed_more or now - self._at >= SEND_EVERY_S:
                self._last, self._at = snap, now
                self.report(snap)


def run(job: Job, report: Report) -> StackResult:
    from pulumi import automation as auto  # in the stack's own process only

    log = _Log(Path(job.log_path))
    progress = StackProgress(job.stack)
    send = _Throttle(progress, report)
    try:
        log.write(f"# {job.operation} of stack {job.stack} (ring {job.ring}), "
                  f"project {job.project_dir}")
        progress.step = "selecting the stack"
        send(force=True)
        try:
            stack = _open(auto, job)
            last = stack.info(show_secrets=False)
        except auto.StackNotFoundError:
            return _no_stack(job)
        except auto.CommandError as exc:  # the backend cannot be read, the stack is locked
            log.write(str(exc))
            return StackResult(job.stack, job.ring, job.operation, FAILED,
                               error=_error_text(progress, exc))
        if last is not None:
            progress.expected = resources_after(last.kind, last.resource_changes)
        progress.step = "starting the engine"
        send(force=True)

        def on_event(event: Any) -> None:
            progress.apply(event)
            send()

        common = {"on_output": log.write, "on_error": log.write, "on_event": on_event,
                  "color": "never", "suppress_progress": True}
        try:
            if job.operation == "rollback":
                changes, note = _rollback(stack, common, job, log)
            else:
                if job.operation == "up" and not job.retry_rolled_back:
                    _refuse_rolled_back(stack, job)
                note = _check_reviewed(job, log) if job.reviewed else None
                changes = _OPERATIONS[job.operation](stack, common)
            status, error = SUCCEEDED, None
        except auto.CommandError as exc:
            status, error, note = FAILED, _error_text(progress, exc), None
        except (RollbackRefused, NotReviewed, RolledBack) as exc:
            status, error, changes, note = FAILED, str(exc), {}, None
        send(force=True)
        return StackResult(
            job.stack, job.ring, job.operation, status, error=error, note=note,
            changes=changes if status == SUCCEEDED else (progress.changes or {}),
            spokes=_spokes_output(stack, log), error_spokes=progress.error_spokes())
    finally:
        log.close()


def _open(auto: Any, job: Job) -> Any:
    """`up` and `preview` create a stack that has a file but no state yet (a new
    shard); the others need the stack to exist."""
    if job.operation in ("up", "preview"):
        return auto.create_or_select_stack(job.stack, work_dir=job.project_dir)
    return auto.select_stack(job.stack, work_dir=job.project_dir)


def _no_stack(job: Job) -> StackResult:
    if job.operation == "destroy":
        return StackResult(job.stack, job.ring, job.operation, SUCCEEDED,
                           note="no such stack in the backend: nothing to destroy")
    return StackResult(job.stack, job.ring, job.operation, FAILED,
                       error="no such stack in the backend (PULUMI_BACKEND_URL); run `up` "
                             "for it first")


def _preview(stack: Any, common: dict) -> dict[str, int]:
    return _ops(stack.preview(**common).change_summary)


def _up(stack: Any, common: dict) -> dict[str, int]:
    return _ops(stack.up(show_secrets=False, **common).summary.resource_changes)


def _destroy(stack: Any, common: dict) -> dict[str, int]:
    return _ops(stack.destroy(show_secrets=False, **common).summary.resource_changes)


def _refresh(stack: Any, common: dict) -> dict[str, int]:
    """Drift: a refresh that only previews (the state is not written). Newer SDKs have
    `preview_refresh`; older ones spell it `refresh(preview_only=True)`."""
    if hasattr(stack, "preview_refresh"):
        return _ops(stack.preview_refresh(show_secrets=False, **common).change_summary)
    return _ops(stack.refresh(preview_only=True, show_secrets=False,
                              **common).summary.resource_changes)


def _check_reviewed(job: Job, log: _Log) -> str:
    """Holds the `up` to the stack's review: the program compares its own plan with the
    review's before it registers anything (KNATIVE_FLEET_REVIEWED, fleet.reviewed) and
    fails with nothing changed when they differ."""
    path = Path(job.reviewed) / job.stack / "report.json"  # type: ignore[arg-type]
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))["plan"]
        digest = plan["digest"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise NotReviewed(f"no review with a plan for this stack at {path} ({exc}); "
                          "review it with python -m review --stack "
                          f"{job.stack} --out {Path(job.reviewed) / job.stack}") from None
    os.environ["KNATIVE_FLEET_REVIEWED"] = str(path.resolve())  # this stack's process only
    log.write(f"# the run is held to the review {path} ({digest})")
    return f"the reviewed plan ({digest})"


class RolledBack(Refused):  # noqa: N818 - what the stack's result says
    """The config about to be applied failed and was rolled back (runner.rollback)."""


def _refuse_rolled_back(stack: Any, job: Job) -> None:
    """Refuses an `up` of a config that failed and was rolled back, unless a person
    asked for it again (--retry-rolled-back)."""
    history = entries(stack.history(page_size=50, show_secrets=False))
    why = retry_refusal(history, file_values(stack_file(Path(job.project_dir), job.stack)))
    if why:
        raise RolledBack(why)


def _rollback(stack: Any, common: dict, job: Job, log: _Log) -> tuple[dict[str, int], str]:
    """The stack back on the config of its newest successful update, if its newest
    update failed (runner.rollback); the update's message records what was rolled
    back, so that `up` does not apply it again unchanged."""
    plan = plan_rollback(entries(stack.history(page_size=50, show_secrets=False)))
    if not isinstance(plan, RollbackPlan):
        return {}, plan
    changed = write_back(stack_file(Path(job.project_dir), job.stack), plan.target)
    what = f"{', '.join(changed) or 'no key'} changed"
    log.write(f"# {plan.message} ({what})")
    changes = _ops(stack.up(show_secrets=False, message=plan.message,
                            **common).summary.resource_changes)
    return changes, f"rolled {plan.summary}; {what}; {plan.failed.label} failed"


_OPERATIONS: dict[str, Callable[[Any, dict], dict[str, int]]] = {
    "preview": _preview, "up": _up, "destroy": _destroy, "refresh": _refresh}


def _ops(changes: Any) -> dict[str, int]:
    return {str(getattr(op, "value", op)): int(n) for op, n in (changes or {}).items()}


def _error_text(progress: StackProgress, exc: Exception) -> str:
    """The run's own error diagnostics; without any (Pulumi failed before the engine
    ran), the end of the command's stderr."""
    if progress.errors:
        return error_text(progress.errors)
    return command_error_text(exc)


def _spokes_output(stack: Any, log: _Log) -> dict[str, dict]:
    """The stack's `spokes` output after the run (secret values are not kept)."""
    try:
        outputs = stack.outputs()
    except Exception as exc:  # noqa: BLE001 - a summary without spokes is still a summary
        log.write(f"# the runner could not read the stack's outputs: {exc}")
        return {}
    spokes = outputs.get("spokes")
    if spokes is None or spokes.secret or not isinstance(spokes.value, dict):
        return {}
    return spokes.value
