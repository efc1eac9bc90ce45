"""A ring's stacks, each in its own OS process, at most `parallel` at once.

Processes are started with the 'spawn' method: a fresh interpreter per stack, nothing
inherited from the runner's memory but the job (runner.worker). A stack slot is given
to the next stack as soon as one ends, so a slow stack does not hold the others back.

Ctrl-C reaches every process of the terminal's group: each stack's Pulumi stops its
update cleanly and writes its state, each worker reports that as its result; the runner
waits for them, starts nothing new, and reports the ring as interrupted.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_mod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runner import worker
from runner.plan import Interrupted, Ring
from runner.progress import Board, Snapshot
from runner.results import FAILED, StackResult, not_run

POLL_S = 0.5


def log_path(log_dir: Path, stack: str) -> Path:
    return log_dir / f"{stack}.log"


def run_ring(ring: Ring, operation: str, project_dir: Path, log_dir: Path, parallel: int,
             board: Board, write: Callable[[str], Any] = print,
             reviewed: Path | None = None,
             retry_rolled_back: bool = False) -> dict[str, StackResult]:
    """Runs every stack of the ring; returns each one's result. Raises
    `plan.Interrupted` (with the results so far) after a Ctrl-C."""
    ctx = multiprocessing.get_context("spawn")
    messages = ctx.Queue()
    pending = list(ring.stacks)
    running: dict[str, Any] = {}
    results: dict[str, StackResult] = {}
    interrupted = False
    while pending or running:
        try:
            while pending and not interrupted and len(running) < max(1, parallel):
                stack = pending.pop(0)
                job = worker.Job(stack.name, ring.number, operation, str(project_dir),
                                 str(log_path(log_dir, stack.name)),
                                 str(reviewed) if reviewed else None, retry_rolled_back)
                proc = ctx.Process(target=worker.main, args=(job, messages),
                                   name=f"runner-{stack.name}")
                proc.start()
                running[stack.name] = proc
                board.started(stack.name, ring.number, operation, job.log_path)
            _receive(messages, results, board, POLL_S)
            _reap(running, results, messages, board, ring.number, operation)
        except KeyboardInterrupt:
            if not interrupted:
                write("interrupted: no new stack starts; waiting for the running ones to "
                      "stop (Pulumi ends each update cleanly and saves its state)")
            interrupted = True
            if not running:
                break
        if interrupted and not running:
            break
    if interrupted:
        for stack in pending:
            results[stack.name] = not_run(stack.name, ring.number, operation,
                                          "interrupted before it started")
        raise Interrupted(results)
    return results


def _receive(messages: Any, results: dict[str, StackResult], board: Board,
             timeout: float) -> None:
    """Takes every message waiting (the first one waits up to `timeout`)."""
    wait: float | None = timeout
    while True:
        try:
            kind, payload = messages.get(timeout=wait) if wait else messages.get_nowait()
        except queue_mod.Empty:
            return
        wait = None
        if kind == "progress" and isinstance(payload, Snapshot):
            board.update(payload)
        elif kind == "result" and isinstance(payload, StackResult):
            results[payload.stack] = payload
            board.finished(payload)


def _reap(running: dict[str, Any], results: dict[str, StackResult], messages: Any,
          board: Board, ring: int, operation: str) -> None:
    """Joins the processes that ended; one that died without a result (killed, out of
    memory) is a failed stack, with the exit code that says how it died."""
    for name, proc in list(running.items()):
        if name in results:
            proc.join()
            del running[name]
        elif not proc.is_alive():
            _receive(messages, results, board, POLL_S)  # its last words may be in flight
            proc.join()
            del running[name]
            if name not in results:
                code = proc.exitcode
                how = f"killed by signal {-code}" if code is not None and code < 0 \
                    else f"exit code {code}"
                results[name] = StackResult(
                    name, ring, operation, FAILED,
                    error=f"the stack's process ended without a result ({how}); see "
                          "its log, and docs/troubleshooting.md ('Interrupted runs') "
                          "before the next run")
                board.finished(results[name])
