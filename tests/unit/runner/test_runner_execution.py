"""A stack's process that dies without a result (killed, out of memory) is a failed
stack with the exit code that says how it died, never a silent gap."""

from __future__ import annotations

import multiprocessing
import os

from runner.execution import _reap
from runner.progress import Board
from runner.results import FAILED


def test_a_process_that_dies_without_a_result_is_a_failed_stack() -> None:
    ctx = multiprocessing.get_context("spawn")
    messages = ctx.Queue()
    proc = ctx.Process(target=os._exit, args=(3,))
    proc.start()
    proc.join(timeout=60)
    lines: list[str] = []
    running = {"eu-1": proc}
    results: dict = {}
    _reap(running, results, messages, Board(lines.append), ring=1, operation="up")
    assert running == {}
    result = results["eu-1"]
    assert result.status == FAILED and result.ring == 1 and result.operation == "up"
    assert "exit code 3" in (result.error or "")
    assert any("eu-1" in line and "FAILED" in line for line in lines)
