"""A review names each wave that waits for approval (its approval gate changes) under
"Needs a human", and writes a value known only after apply as a reviewer reads it."""

from __future__ import annotations

from core.resource_types import APPROVAL_GATE
from review.fields import COMPUTED, UNKNOWN, object_diff
from review.markdown import render
from review.report import to_json
from review.summary import summarise

URN = "urn:pulumi:s::knative-fleet::" + APPROVAL_GATE.type + "::approval-main"


def gate(op: str) -> dict:
    inputs = {"wave": "main", "changes": "sha256:2", "spokes": ["spoke-3", "spoke-4"]}
    return {"op": op, "urn": URN, "newState": {"urn": URN, "type": APPROVAL_GATE.type,
                                                "inputs": inputs},
            "oldState": {"urn": URN, "type": APPROVAL_GATE.type,
                         "inputs": {**inputs, "changes": "sha256:1"}}}


def test_a_changed_approval_gate_is_a_wave_waiting_for_approval():
    summary = summarise({"steps": [gate("update")]}, 0, "s")
    [waits] = [p for p in summary.needs_human if p.category == "approvals"]
    assert waits.objects == ("spoke-3", "spoke-4")
    assert waits.text.startswith("wave 'main' changes 2 spoke(s): `pulumi up` applies the "
                                 "waves before it, then waits for a person's approval")
    assert "KNATIVE_FLEET_APPROVE=main" in waits.text
    assert summary.ok and not summary.noop
    report = render(summary)
    assert "**Waits for approval**" in report, report
    assert to_json(summary)["needsHuman"][0]["category"] == "approvals"


def test_an_unchanged_approval_gate_needs_nobody():
    summary = summarise({"steps": [gate("same")]}, 0, "s")
    assert not summary.needs_human and summary.noop


def test_a_value_known_only_after_apply_is_written_so():
    old = {"inputs": {"changes": "sha256:1"}}
    new = {"inputs": {"changes": UNKNOWN}}
    [change] = object_diff(old, new, None)
    assert (change.old, change.new) == ("sha256:1", COMPUTED)
