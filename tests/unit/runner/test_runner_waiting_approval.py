"""A stack whose `up` stopped before a wave waiting for approval, as the runner reads it
when the program stopped by itself (rollout.approval): its error is the wave's alone,
and the spokes its recorded outputs show as not ready (a waiting wave's spoke that was
never installed) are not spokes that failed it."""

from __future__ import annotations

from rollout.approval import waiting_message
from runner.progress import PROGRAM_FAILED, error_text
from runner.results import FAILED, StackResult, reason

WAITING = waiting_message("main", ["s2", "s3"], ["rest"])
# The `spokes` output such a run records: s3 joined the waiting wave and runs nothing yet.
SPOKES = {"s1": {"targetClusterResolved": {"status": "True"}, "ready": True, "wave": "canary"},
          "s2": {"targetClusterResolved": {"status": "True"}, "ready": True, "wave": "main"},
          "s3": {"targetClusterResolved": {"status": "True"}, "ready": False, "wave": "main"}}


def test_the_programs_own_stop_is_a_wait_and_names_no_failed_spoke() -> None:
    errors = [reason(f"error: {WAITING}"), f"{PROGRAM_FAILED}: 32"]
    result = StackResult("prod", 1, "up", FAILED, error=error_text(errors), spokes=SPOKES)
    assert result.error == WAITING
    assert result.waiting_approval
    assert result.failed_spokes == []
    assert result.to_json()["waitingApproval"] is True


def test_a_stop_with_another_failure_is_a_failure_with_its_spokes() -> None:
    error = "1 of 3 spokes could not be resolved: s3 (ClusterProfileNotFound).\n" + WAITING
    result = StackResult("prod", 1, "up", FAILED, error=error, spokes=SPOKES,
                         error_spokes=["s3"])
    assert not result.waiting_approval
    assert result.failed_spokes == ["s3"]
