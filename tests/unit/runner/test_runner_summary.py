"""The rollout's summary: failed stacks with the spokes that failed them (from the run's
errors and the stack's outputs), succeeded stacks, stacks never touched because an
earlier ring failed; text and JSON; the exit code."""

from __future__ import annotations

import json
from pathlib import Path

from runner import summary
from runner.plan import Ring, rings, run_rollout
from runner.results import FAILED, SUCCEEDED, StackResult, spokes_in_errors, unhealthy_spokes
from runner.selection import StackFile

DATA = Path(__file__).parent / "data"
OUTPUTS = json.loads((DATA / "stack-outputs.json").read_text())
ERROR = ("spoke 'eu-3': ClusterProfileNotFound: ClusterProfile fleet-system/eu-3 not found. "
         "Fix: create it\n1 of 3 spokes could not be resolved: eu-3 (ClusterProfileNotFound).")


def fleet() -> list[StackFile]:
    return [StackFile(ring, name, Path(name)) for ring, name in
            [(1, "eu-ring1"), (1, "us-ring1"), (2, "eu-ring2"), (2, "us-ring2")]]


def run_ring(ring: Ring) -> dict[str, StackResult]:
    out = {}
    for s in ring.stacks:
        if s.name == "eu-ring1":
            out[s.name] = StackResult(
                s.name, 1, "up", FAILED, elapsed_s=75.2, log="/runs/eu-ring1.log",
                error=ERROR, spokes=OUTPUTS["eu-ring1"]["spokes"],
                error_spokes=spokes_in_errors([ERROR]))
        else:
            out[s.name] = StackResult(s.name, ring.number, "up", SUCCEEDED, elapsed_s=12,
                                      log=f"/runs/{s.name}.log",
                                      changes={"create": 3, "same": 1})
    return out


def test_failed_spokes_come_from_errors_and_outputs() -> None:
    assert spokes_in_errors([ERROR, "error: spoke 'x-1': InvalidSpec: no"]) == ["eu-3", "x-1"]
    assert unhealthy_spokes(OUTPUTS["eu-ring1"]["spokes"]) == ["eu-2"]
    assert unhealthy_spokes({"a": {"targetClusterResolved": {"status": "True"},
                                   "ready": True}}) == []
    result = run_ring(Ring(1, tuple(fleet()[:1])))["eu-ring1"]
    assert result.failed_spokes == ["eu-2", "eu-3"]
    # a stack that succeeded names no failed spoke, whatever its old outputs say
    assert StackResult("s", 1, "up", SUCCEEDED,
                       spokes=OUTPUTS["eu-ring1"]["spokes"]).failed_spokes == []


def test_text_summary_names_failed_succeeded_and_untouched() -> None:
    rollout = run_rollout("up", rings(fleet()), run_ring)
    text = summary.render(rollout, "/runs")
    assert "FAILED     eu-ring1 (1m15s); spokes: eu-2, eu-3" in text
    assert "ClusterProfileNotFound" in text and "log: /runs/eu-ring1.log" in text
    assert "succeeded  us-ring1 (12s, 3 create, 1 same)" in text
    assert "untouched  eu-ring2: ring 1 failed, so ring 2 was not started" in text
    assert "up: 1 succeeded, 1 failed, 2 never touched." in text
    assert "Stopped at ring 1 (ring 1 failed); never touched: eu-ring2, us-ring2." in text
    assert "Failed stacks: eu-ring1; failed spokes: eu-2, eu-3." in text
    assert text.index("ring 1 (2 stacks)") < text.index("ring 2 (2 stacks)")
    assert summary.exit_code(rollout) == 1


def test_json_summary() -> None:
    rollout = run_rollout("up", rings(fleet()), run_ring)
    doc = json.loads(json.dumps(summary.to_json(rollout, "/runs")))
    assert doc["ok"] is False and doc["stoppedAtRing"] == 1 and doc["logDir"] == "/runs"
    assert doc["failed"] == ["eu-ring1"]
    assert doc["failedSpokes"] == {"eu-ring1": ["eu-2", "eu-3"]}
    assert doc["succeeded"] == ["us-ring1"]
    assert doc["untouched"] == ["eu-ring2", "us-ring2"]
    first = doc["rings"][0]["stacks"][0]
    assert first["stack"] == "eu-ring1" and first["status"] == "failed"
    assert first["spokes"] == ["eu-1", "eu-2"] and first["elapsedSeconds"] == 75.2
    assert doc["rings"][1]["stacks"][0]["status"] == "not-run"


def test_a_clean_run_exits_zero() -> None:
    def ok(ring: Ring) -> dict[str, StackResult]:
        return {s.name: StackResult(s.name, ring.number, "up", SUCCEEDED) for s in ring.stacks}

    rollout = run_rollout("up", rings(fleet()), ok)
    assert summary.exit_code(rollout) == 0
    text = summary.render(rollout)
    assert "up: 4 succeeded, 0 failed, 0 never touched." in text
    assert "Stopped" not in text and "Failed" not in text


def test_drift_is_reported_and_fails_the_check() -> None:
    def drift(ring: Ring) -> dict[str, StackResult]:
        return {s.name: StackResult(s.name, ring.number, "refresh", SUCCEEDED,
                                    changes={"same": 5, "update": int(s.name == "us-ring2")})
                for s in ring.stacks}

    rollout = run_rollout("refresh", rings(fleet()), drift)
    text = summary.render(rollout)
    assert "DRIFTED    us-ring2 (0s, 5 same, 1 update)" in text
    assert "refresh: 4 succeeded, 0 failed, 0 never touched, 1 drifted." in text
    assert summary.to_json(rollout)["drifted"] == ["us-ring2"]
    assert summary.exit_code(rollout) == 1


def test_long_errors_are_cut_in_the_text_not_in_the_json() -> None:
    error = "\n".join(f"line {i}" for i in range(20))

    def bad(ring: Ring) -> dict[str, StackResult]:
        return {s.name: StackResult(s.name, 1, "up", FAILED, error=error) for s in ring.stacks}

    rollout = run_rollout("up", rings(fleet()[:1]), bad)
    text = summary.render(rollout)
    assert "line 5" in text and "line 6" not in text and "14 more lines" in text
    assert summary.to_json(rollout)["rings"][0]["stacks"][0]["error"] == error


def test_a_pulumi_command_error_is_told_by_its_stderr() -> None:
    from runner.results import command_error_text

    exc = Exception("\n code: 255\n stdout: Updating (s):\n lots\n stderr: "
                    "warning: x\nerror: the stack is locked")
    assert command_error_text(exc) == "warning: x\nerror: the stack is locked"
    assert command_error_text(exc, tail=1) == "error: the stack is locked"
    assert command_error_text(Exception("plain")) == "plain"
