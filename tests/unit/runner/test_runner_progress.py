"""Per-stack progress from recorded engine events (data/events-*.jsonl: the Pulumi 3.259
engine's event log of the throwaway project tests/lab/test_runner_stacks.py writes, a
stack with spokes a-1 and a-2: created, failed on a-2, previewed with a-3 added,
destroyed), and the board that prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pulumi.automation import EngineEvent

from runner.progress import (
    Board,
    Snapshot,
    StackProgress,
    elapsed,
    error_text,
    progress_line,
    resources_after,
)
from runner.results import FAILED, SUCCEEDED, StackResult

DATA = Path(__file__).parent / "data"


def events(name: str) -> list[EngineEvent]:
    return [EngineEvent.from_json(json.loads(line))
            for line in (DATA / f"events-{name}.jsonl").read_text().splitlines() if line]


def replay(name: str, expected: int | None = None) -> tuple[StackProgress, list[Snapshot]]:
    progress = StackProgress("rec-a", expected)
    seen = []
    for event in events(name):
        progress.apply(event)
        seen.append(progress.snapshot())
    return progress, seen


def test_a_fresh_install_counts_objects_as_the_engine_sees_them() -> None:
    progress, seen = replay("up-create")
    assert seen[0].total is None and seen[0].step == "running the program"
    assert any(s.step.startswith("creating a-") for s in seen)
    totals = [s.total for s in seen if s.total is not None]
    assert totals == sorted(totals) and totals[-1] == 3  # grows as the program registers
    assert all(s.done <= (s.total or 0) for s in seen)
    last = seen[-1]
    assert (last.done, last.total, last.failed, last.step) == (3, 3, 0, "finished")
    assert progress.changes == {"create": 3}
    assert progress.errors == []  # debug diagnostics are not errors


def test_a_failed_run_keeps_its_errors_and_names_the_spoke() -> None:
    progress, seen = replay("up-failed", expected=3)
    assert seen[-1].total == 3 and seen[-1].done == 2
    assert [e.split(":")[0] for e in progress.errors] == [
        "spoke 'a-2'", "1 of 2 spokes could not be resolved", "an unhandled error occurred"]
    assert progress.error_spokes() == ["a-2"]
    text = error_text(progress.errors)
    assert text.startswith("spoke 'a-2': ClusterProfileNotFound")
    assert "unhandled error" not in text


def test_a_preview_counts_each_object_once() -> None:
    progress, seen = replay("preview", expected=3)
    assert any(s.step == "would create a-3" for s in seen)
    assert (seen[-1].done, seen[-1].total) == (4, 4)  # the engine saw more than expected
    assert progress.changes == {"create": 1, "same": 3}


def test_a_destroy_counts_down_the_state() -> None:
    progress, seen = replay("destroy", expected=3)
    assert all(s.total == 3 for s in seen)
    assert [s.done for s in seen][-1] == 3
    assert any(s.step.startswith("deleting") for s in seen)
    assert progress.changes == {"delete": 3}


def test_failed_objects_count_and_name_their_spoke() -> None:
    urn = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$kubernetes:apps/v1:"
           "Deployment::spoke-7:knative-serving/activator")
    progress = StackProgress("s")
    progress.apply(EngineEvent.from_json({"resourcePreEvent": {"metadata": {
        "op": "create", "urn": urn, "type": "kubernetes:apps/v1:Deployment"}}}))
    assert progress.step == "creating spoke-7:knative-serving/activator"
    progress.apply(EngineEvent.from_json({"resOpFailedEvent": {"metadata": {
        "op": "create", "urn": urn, "type": "kubernetes:apps/v1:Deployment"},
        "status": 1, "steps": 1}}))
    snap = progress.snapshot()
    assert (snap.done, snap.total, snap.failed) == (1, 1, 1)
    assert progress.error_spokes() == ["spoke-7"]


@pytest.mark.parametrize("kind,changes,want", [
    ("update", {"create": 3}, 3),
    ("update", {"same": 2, "update": 1, "delete": 4}, 3),
    ("destroy", {"delete": 3}, 0),
    ("refresh", {"same": 5}, 5),
    (None, None, None),
])
def test_resources_after(kind: str | None, changes: dict | None, want: int | None) -> None:
    assert resources_after(kind, changes) == want


@pytest.mark.parametrize("seconds,text", [(0, "0s"), (59.9, "59s"), (72, "1m12s"),
                                          (3600 + 125, "1h02m")])
def test_elapsed(seconds: float, text: str) -> None:
    assert elapsed(seconds) == text


def test_progress_line() -> None:
    snap = Snapshot("eu-ring1", "creating spoke-1:knative-serving/activator", 37, 230, 1)
    assert progress_line(snap, "up", 72, width=10) == (
        "  eu-ring1    up  37/230 objects, 1 failed  1m12s  "
        "creating spoke-1:knative-serving/activator")
    assert "0/? objects" in progress_line(Snapshot("s", "starting", 0, None), "up", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_board_prints_start_throttled_progress_failures_at_once_and_the_end() -> None:
    lines: list[str] = []
    clock = Clock()
    board = Board(lines.append, every_s=10, clock=clock, width=4)
    board.started("eu-1", 1, "up", "/runs/eu-1.log")
    assert lines == ["  eu-1  up started (ring 1); log: /runs/eu-1.log"]
    clock.now += 3
    board.update(Snapshot("eu-1", "creating a", 1, 10))
    assert len(lines) == 1  # too soon
    clock.now += 8
    board.update(Snapshot("eu-1", "creating b", 2, 10))
    assert lines[-1] == "  eu-1  up  2/10 objects  11s  creating b"
    board.update(Snapshot("eu-1", "creating b", 2, 10))
    clock.now += 20
    board.update(Snapshot("eu-1", "creating b", 2, 10))
    assert len(lines) == 2  # nothing changed: nothing printed
    clock.now += 1
    board.update(Snapshot("eu-1", "failed c", 3, 10, failed=1))
    assert lines[-1].endswith("3/10 objects, 1 failed  32s  failed c")  # at once
    board.finished(StackResult("eu-1", 1, "up", FAILED, elapsed_s=33, log="/runs/eu-1.log",
                               changes={"create": 2}))
    assert lines[-2:] == ["  eu-1  up FAILED in 33s  (2 create)",
                          "        full log: /runs/eu-1.log"]
    board.finished(StackResult("us-1", 1, "destroy", SUCCEEDED, elapsed_s=5,
                               note="no such stack in the backend: nothing to destroy"))
    assert lines[-1] == ("  us-1  destroy succeeded in 5s; no such stack in the backend: "
                         "nothing to destroy")
