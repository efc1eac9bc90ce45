"""The ring rule: rings ascending, a ring's stacks together, the next ring only after
every stack of this one succeeded; the first failed ring stops `up` and `destroy`,
while `preview` and `refresh` report every ring."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.plan import Interrupted, Ring, rings, run_rollout, stops_rollout
from runner.results import FAILED, NOT_RUN, SUCCEEDED, StackResult, not_run
from runner.selection import StackFile


def stack(name: str, ring: int) -> StackFile:
    return StackFile(ring, name, Path(f"Pulumi.{name}.yaml"))


FLEET = [stack("b-2", 2), stack("a-1", 1), stack("c-1", 1), stack("a-3", 3), stack("a-2", 2)]


class FakeRing:
    """A run_ring that records which rings ran and fails the stacks it is told to."""

    def __init__(self, operation: str, failing: set[str] = frozenset()) -> None:
        self.operation = operation
        self.failing = failing
        self.ran: list[int] = []

    def __call__(self, ring: Ring) -> dict[str, StackResult]:
        self.ran.append(ring.number)
        return {s.name: StackResult(s.name, ring.number, self.operation,
                                    FAILED if s.name in self.failing else SUCCEEDED,
                                    error="boom" if s.name in self.failing else None)
                for s in ring.stacks}


def test_rings_are_ascending_and_stacks_sorted_within() -> None:
    got = rings(FLEET)
    assert [r.number for r in got] == [1, 2, 3]
    assert [r.names for r in got] == [["a-1", "c-1"], ["a-2", "b-2"], ["a-3"]]
    assert rings([]) == []


def test_every_ring_runs_when_all_succeed() -> None:
    run = FakeRing("up")
    rollout = run_rollout("up", rings(FLEET), run)
    assert run.ran == [1, 2, 3]
    assert rollout.ok and rollout.stopped_at is None
    assert [r.stack for r in rollout.succeeded] == ["a-1", "c-1", "a-2", "b-2", "a-3"]


@pytest.mark.parametrize("operation", ["up", "destroy"])
def test_the_first_failed_ring_stops_the_rollout(operation: str) -> None:
    run = FakeRing(operation, failing={"c-1"})
    rollout = run_rollout(operation, rings(FLEET), run)
    assert run.ran == [1]
    assert rollout.stopped_at == 1
    assert not rollout.ok
    assert [r.stack for r in rollout.failed] == ["c-1"]
    assert [r.stack for r in rollout.succeeded] == ["a-1"]
    assert [r.stack for r in rollout.untouched] == ["a-2", "b-2", "a-3"]
    assert all(r.status == NOT_RUN and "ring 1 failed" in (r.note or "")
               for r in rollout.untouched)


def test_a_failure_in_a_later_ring_keeps_the_earlier_rings_results() -> None:
    run = FakeRing("up", failing={"b-2"})
    rollout = run_rollout("up", rings(FLEET), run)
    assert run.ran == [1, 2]
    assert rollout.stopped_at == 2
    assert [r.stack for r in rollout.succeeded] == ["a-1", "c-1", "a-2"]
    assert [r.stack for r in rollout.untouched] == ["a-3"]


@pytest.mark.parametrize("operation", ["preview", "refresh"])
def test_read_only_operations_report_every_ring(operation: str) -> None:
    run = FakeRing(operation, failing={"a-1"})
    rollout = run_rollout(operation, rings(FLEET), run)
    assert run.ran == [1, 2, 3]
    assert rollout.stopped_at is None
    assert [r.stack for r in rollout.failed] == ["a-1"]
    assert not rollout.ok


def test_a_stack_without_a_result_is_a_failure() -> None:
    rollout = run_rollout("up", rings([stack("x", 1), stack("y", 1), stack("z", 2)]),
                          lambda ring: {})
    assert [r.stack for r in rollout.failed] == ["x", "y"]
    assert "no result" in (rollout.results["x"].error or "")
    assert [r.stack for r in rollout.untouched] == ["z"]


def test_an_interrupted_ring_stops_every_operation() -> None:
    def run(ring: Ring) -> dict[str, StackResult]:
        raise Interrupted({
            "a-1": StackResult("a-1", 1, "preview", FAILED, error="interrupted"),
            "c-1": not_run("c-1", 1, "preview", "interrupted before it started")})

    rollout = run_rollout("preview", rings(FLEET), run)
    assert rollout.interrupted and rollout.stopped_at == 1
    assert [r.stack for r in rollout.failed] == ["a-1"]
    assert [r.stack for r in rollout.untouched] == ["c-1", "a-2", "b-2", "a-3"]
    assert "interrupted" in (rollout.results["a-2"].note or "")


def test_stops_rollout() -> None:
    ok = StackResult("a", 1, "up", SUCCEEDED)
    bad = StackResult("b", 1, "up", FAILED)
    assert not stops_rollout("up", [ok])
    assert stops_rollout("up", [ok, bad])
    assert stops_rollout("destroy", [bad])
    assert not stops_rollout("preview", [bad])


def test_drift_makes_a_refresh_rollout_not_ok() -> None:
    def run(ring: Ring) -> dict[str, StackResult]:
        return {s.name: StackResult(s.name, ring.number, "refresh", SUCCEEDED,
                                    changes={"same": 3, "update": 1 if s.name == "a-2" else 0})
                for s in ring.stacks}

    rollout = run_rollout("refresh", rings(FLEET), run)
    assert [r.stack for r in rollout.drifted] == ["a-2"]
    assert not rollout.ok
