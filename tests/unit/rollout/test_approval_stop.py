"""Where an `up` stops for an approval, known before it registers anything: the stack
output `approvals` keeps the digest each approval gate last let through; a wave whose
planned digest differs, in a run not approved for it, is the one the run stops before.
Outputs that cannot tell (unreadable, or written by a program that kept no record)
leave the decision to the gate's own step."""

from __future__ import annotations

import pytest

from config.fleet import parse_fleet_config
from fleet import plan_fleet
from lab.paths import RELEASES
from rollout.approval import (
    ApprovalStop,
    approval_stop,
    recorded_approvals,
    waiting_message,
    waiting_wave,
)
from tests.support.factories import FakeInventory, profile

PROFILES = [profile("s1", ring="canary"), profile("s2", ring="main"),
            profile("s3", ring="later"), profile("s4", ring="rest")]
WAVES = [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
         {"name": "main", "approval": "Required", "selector": {"matchLabels": {"ring": "main"}}},
         {"name": "later", "approval": "Required",
          "selector": {"matchLabels": {"ring": "later"}}},
         {"name": "rest"}]


def steps(broken: dict | None = None):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"},
                   "serving": {"version": "1.23"}} for p in PROFILES],
        "rollout": {"waves": WAVES}})
    return plan_fleet(cfg, FakeInventory(PROFILES, broken=broken)).waves


@pytest.fixture(scope="module")
def planned():
    waves = steps()
    return waves, {w.name: w.approval.changes for w in waves if w.approval}


@pytest.mark.parametrize(("outputs", "recorded"), [
    (None, None),  # unreadable: the gates decide
    ({}, {}),  # a new stack: no gate yet
    ({"ring": 1, "spokes": {}}, {}),  # no rollout recorded: no gate let anything through
    ({"waves": {"main": {"status": "Completed"}}}, None),  # a program that kept no record
    ({"waves": {}, "approvals": {"main": "sha256:a", "odd": 3}}, {"main": "sha256:a"}),
    ({"waves": {}, "approvals": "[secret]"}, None),
])
def test_what_the_last_outputs_say_the_gates_let_through(outputs, recorded):
    assert recorded_approvals(outputs) == recorded


def test_an_unchanged_wave_waits_for_nothing(planned):
    waves, applied = planned
    assert waiting_wave(waves, frozenset(), applied) is None


def test_the_first_changed_wave_not_approved_is_where_the_run_stops(planned):
    waves, applied = planned
    both = {"main": "sha256:before", "later": "sha256:before"}
    assert waiting_wave(waves, frozenset(), both).name == "main"
    assert waiting_wave(waves, frozenset({"main"}), both).name == "later"
    assert waiting_wave(waves, frozenset({"main", "later"}), both) is None
    assert waiting_wave(waves, frozenset(), {**applied, "later": "x"}).name == "later"


def test_a_wave_no_gate_let_through_yet_waits(planned):
    """The first run after a wave gets `approval: Required`: its gate would be created,
    which needs the approval once."""
    waves, applied = planned
    assert waiting_wave(waves, frozenset(), {}).name == "main"
    assert waiting_wave(waves, frozenset(), {"main": applied["main"]}).name == "later"


def test_without_a_record_nothing_is_known_to_wait(planned):
    waves, _ = planned
    assert waiting_wave(waves, frozenset(), None) is None


def test_a_wave_not_started_or_reaching_no_spoke_has_no_gate_to_wait_at():
    unreachable = {n: "ClusterProfileNotFound" for n in ("s1", "s2")}
    waves = steps(broken=unreachable)  # the canary stops the rollout: nothing after starts
    assert waiting_wave(waves, frozenset(), {}) is None


def test_the_stop_says_what_the_gate_would_have_said(planned):
    waves, _ = planned
    outputs = {"waves": {}, "approvals": {"main": "sha256:before"},
               "spokes": {"s2": {"serving": "1.22.1", "ready": True}}}
    stop = approval_stop(waves, frozenset(), outputs)
    assert stop.waiting is not None and stop.waiting.name == "main"
    assert stop.recorded == {"main": "sha256:before"}
    assert stop.spokes == outputs["spokes"]
    assert stop.message == waiting_message("main", ["s2"], ["later", "rest"]) == (
        "wave 'main' waits for approval: its spokes (s2) change, and it and the waves "
        "after it (later, rest) were not started; their objects, in the clusters and in "
        "the state, are as they were. To approve, run again with KNATIVE_FLEET_APPROVE=main "
        "(or python -m runner up --approve main).")
    assert ApprovalStop().message is None and ApprovalStop().spokes == {}
    assert approval_stop(waves, frozenset(), {"spokes": "[secret]"}).spokes == {}
