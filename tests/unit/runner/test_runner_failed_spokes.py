"""The summary names the spokes that failed a stack, also when a wave was not healthy,
and every error starts with its reason, not with the engine's or the SDK's wording."""

from __future__ import annotations

from pathlib import Path

from runner.plan import Ring, Rollout
from runner.progress import StackProgress
from runner.results import FAILED, StackResult, reason
from runner.selection import StackFile
from runner.summary import render, to_json

WAVE = ("wave 'canary' is not healthy: 2 spoke(s) failed within 30s, more than its "
        "maxFailures (0):\n  spoke 'spoke-1': Deployment knative-serving/controller: "
        "rollout not complete\n  spoke 'spoke-2': unreachable: refused\nLater waves were "
        "not started (main): their spokes' objects, in the clusters and in the state, are "
        "as they were.")


class Diagnostic:
    def __init__(self, message: str, urn: str = "") -> None:
        self.severity, self.message, self.urn = "error", message, urn


class Event:
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic_event = diagnostic
        self.prelude_event = self.resource_pre_event = self.res_outputs_event = None
        self.res_op_failed_event = self.summary_event = None


def test_the_reason_comes_first():
    assert reason("error: update failed: Exception calling application: " + WAVE) == WAVE
    assert reason("Exception calling application: wave 'x' waits") == "wave 'x' waits"
    assert reason("spoke 'a': ClusterProfileNotFound: x") == "spoke 'a': ClusterProfileNotFound: x"


def test_a_wave_that_is_not_healthy_names_its_spokes():
    progress = StackProgress("s")
    gate = "urn:pulumi:s::knative-fleet::pulumi-python:dynamic/knative-fleet:WaveGate::wave-canary"
    progress.apply(Event(Diagnostic("Exception calling application: " + WAVE, gate)))
    progress.apply(Event(Diagnostic("update failed")))
    assert progress.errors[0].startswith("wave 'canary' is not healthy")
    assert progress.error_spokes() == ["spoke-1", "spoke-2"]
    result = StackResult("s", 1, "up", FAILED, error="\n".join(progress.errors),
                         error_spokes=progress.error_spokes())
    ring = Ring(1, (StackFile(1, "s", Path("Pulumi.s.yaml")),))
    rollout = Rollout("up", [ring], {"s": result}, stopped_at=1)
    assert to_json(rollout)["failedSpokes"] == {"s": ["spoke-1", "spoke-2"]}
    text = render(rollout)
    assert "FAILED     s (0s); spokes: spoke-1, spoke-2" in text, text
    assert "             wave 'canary' is not healthy" in text
    assert "Exception calling application" not in text
