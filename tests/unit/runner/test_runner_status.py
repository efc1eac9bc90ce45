"""The fleet-wide view from recorded stack outputs: one row per spoke with its ring,
resolution, versions, readiness and the stack's last update; stacks that were never
created or cannot be read get a row of their own; the same as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.selection import StackFile
from runner.status import (
    COLUMNS,
    StackStatus,
    render_table,
    rows,
    stack_status,
    to_json,
    totals,
    update_json,
)

DATA = Path(__file__).parent / "data"
OUTPUTS = json.loads((DATA / "stack-outputs.json").read_text())
LAST = {"kind": "update", "result": "succeeded", "version": 7,
        "startTime": "2026-03-01T10:00:00", "endTime": "2026-03-01T10:04:12"}


def stack_file(name: str, ring: int = 1) -> StackFile:
    return StackFile(ring, name, Path(f"stacks/Pulumi.{name}.yaml"))


@pytest.fixture()
def fleet() -> list[StackStatus]:
    return [
        stack_status(stack_file("us-ring2", ring=2), OUTPUTS["us-ring2"], LAST),
        stack_status(stack_file("eu-ring1"), OUTPUTS["eu-ring1"], LAST),
        stack_status(stack_file("new-shard", ring=3), None, None),
        StackStatus("locked", 1, error="the stack is locked"),
        stack_status(stack_file("empty"), {}, None),
    ]


def test_spokes_read_from_the_outputs(fleet: list[StackStatus]) -> None:
    eu = fleet[1]
    assert eu.ring == 1 and eu.exists
    eu1, eu2 = eu.spokes
    assert (eu1.spoke, eu1.resolved, eu1.reason, eu1.serving, eu1.eventing, eu1.ready) == \
        ("eu-1", "True", "Resolved", "1.23.0", "1.23.0", True)
    assert (eu1.group, eu1.wave, eu1.cluster_profile) == ("eu", "canary", "fleet-system/eu-1")
    assert (eu2.resolved, eu2.reason, eu2.serving, eu2.ready) == \
        ("False", "ClusterProfileNotFound", None, False)
    assert "not found" in (eu2.message or "")


def test_the_ring_is_the_one_the_stack_exported_else_its_file() -> None:
    assert stack_status(stack_file("s", ring=4), {"ring": 2}, None).ring == 2
    assert stack_status(stack_file("s", ring=4), {}, None).ring == 4
    assert stack_status(stack_file("s", ring=4), {"ring": "[secret]"}, None).ring == 4


def test_table_rows_by_ring_then_stack(fleet: list[StackStatus]) -> None:
    got = rows(fleet)
    assert [r[:3] for r in got] == [
        ("empty", "1", "-"), ("eu-ring1", "1", "eu-1"), ("eu-ring1", "1", "eu-2"),
        ("locked", "1", "-"), ("us-ring2", "2", "us-1"), ("new-shard", "3", "-")]
    by_spoke = {r[2]: r for r in got if r[2] != "-"}
    assert by_spoke["eu-1"] == ("eu-ring1", "1", "eu-1", "yes", "Resolved", "1.23.0",
                                "1.23.0", "yes", "update succeeded 2026-03-01 10:04:12 UTC #7")
    assert by_spoke["eu-2"][3:8] == ("NO", "ClusterProfileNotFound", "-", "-", "NO")
    assert by_spoke["us-1"][5:7] == ("1.22.1", "-")
    other = {r[0]: r for r in got if r[2] == "-"}
    assert other["new-shard"][4] == "not created" and other["new-shard"][8] == "never"
    assert other["locked"][4] == "cannot read (below)"
    assert other["empty"][4] == "no spokes" and other["empty"][8] == "never"


def test_last_update_without_a_number_on_a_self_managed_backend() -> None:
    last = {**LAST, "version": 0}
    st = stack_status(stack_file("us-ring2", ring=2), OUTPUTS["us-ring2"], last)
    assert rows([st])[0][8] == "update succeeded 2026-03-01 10:04:12 UTC"


def test_terminal_table_is_aligned_with_a_totals_line(fleet: list[StackStatus]) -> None:
    text = render_table(fleet)
    lines = text.splitlines()
    assert lines[0].split() == [w for c in COLUMNS for w in c.split()]
    start = lines[0].index("SPOKE")
    assert all(line[start:].startswith(("eu-", "us-", "-", "SPOKE"))
               for line in lines[:-2]), text
    assert lines[-2] == "cannot read locked: the stack is locked"
    assert lines[-1] == ("5 stacks (1 not created, 1 unreadable), 3 spokes: 2 resolved, "
                         "2 ready")


def test_json_has_every_stack_and_spoke(fleet: list[StackStatus]) -> None:
    doc = json.loads(json.dumps(to_json(fleet)))
    assert [s["stack"] for s in doc["stacks"]] == ["empty", "eu-ring1", "locked",
                                                   "us-ring2", "new-shard"]
    eu = doc["stacks"][1]
    assert eu["ring"] == 1 and eu["lastUpdate"]["version"] == 7
    assert eu["spokes"][1] == {
        "spoke": "eu-2", "clusterProfile": "fleet-system/eu-2", "resolved": "False",
        "reason": "ClusterProfileNotFound",
        "message": "ClusterProfile fleet-system/eu-2 not found on the hub",
        "serving": None, "eventing": None, "ready": False, "group": "eu", "wave": "rest",
        "waveStatus": "Healthy"}
    assert doc["stacks"][4]["exists"] is False
    assert doc["totals"] == totals(fleet) == {
        "stacks": 5, "notCreated": 1, "unreadable": 1, "spokes": 3, "resolved": 2,
        "ready": 2, "waitingApproval": 0}
    assert eu["waitingApproval"] == []


def test_odd_outputs_do_not_break_the_view() -> None:
    st = stack_status(stack_file("odd"), {"spokes": {"x": "[secret]", "y": {
        "targetClusterResolved": None, "ready": "yes"}}}, None)
    assert [(s.spoke, s.resolved, s.ready) for s in st.spokes] == [
        ("x", None, None), ("y", None, None)]
    assert rows([st])[0][3:8] == ("-", "-", "-", "-", "-")


def test_the_sdks_update_summary_as_json() -> None:
    from datetime import datetime
    from types import SimpleNamespace

    summary = SimpleNamespace(kind="destroy", result="succeeded", version=0,
                              start_time=datetime(2026, 3, 1, 10, 0, 0),
                              end_time=None)
    assert update_json(summary) == {"kind": "destroy", "result": "succeeded", "version": 0,
                                    "startTime": "2026-03-01T10:00:00Z", "endTime": None}


# What a run that stopped before wave 'main' records (components.fleet): the wave waits,
# the one after it was not started, and their spokes keep what the last update applied.
STOPPED = {
    "ring": 1,
    "waves": {"canary": {"spokes": ["s1"], "status": "Completed"},
              "main": {"spokes": ["s3"], "status": "WaitingForApproval"},
              "rest": {"spokes": ["s4"], "status": "NotStarted"}},
    "approvals": {"main": "sha256:applied"},
    "spokes": {"s1": {"wave": "canary", "ready": True, "serving": "1.23.0"},
               "s3": {"wave": "main", "ready": True, "serving": "1.22.1"},
               "s4": {"wave": "rest", "ready": True, "serving": "1.22.1"}}}
FAILED_LAST = {**LAST, "result": "failed"}


def test_a_spoke_of_a_wave_waiting_for_approval_says_so_naming_the_wave() -> None:
    st = stack_status(stack_file("prod"), STOPPED, FAILED_LAST)
    ready = {r[2]: r[7] for r in rows([st])}
    assert ready == {"s1": "yes", "s3": "waiting for approval (main)", "s4": "yes"}
    assert [s.wave_status for s in st.spokes] == ["Completed", "WaitingForApproval",
                                                  "NotStarted"]
    assert {r[2]: r[5] for r in rows([st])}["s3"] == "1.22.1"  # what it runs, not the plan
    assert st.waiting_approval == ["main"]


def test_the_table_names_the_waiting_wave_and_counts_its_spokes() -> None:
    st = stack_status(stack_file("prod"), STOPPED, FAILED_LAST)
    lines = render_table([st]).splitlines()
    assert lines[-2] == (
        "prod: wave 'main' waits for approval (spokes: s3; not started after it: rest): "
        "once a person approved, run its up again with --approve main")
    assert lines[-1] == ("1 stacks (0 not created, 0 unreadable), 3 spokes: 0 resolved, "
                         "3 ready, 1 waiting for approval")
    doc = to_json([st])
    assert doc["stacks"][0]["waitingApproval"] == ["main"]
    assert doc["stacks"][0]["waves"] == {"canary": "Completed", "main": "WaitingForApproval",
                                         "rest": "NotStarted"}
    assert doc["totals"]["waitingApproval"] == 1


def test_once_approved_and_applied_the_wave_is_completed_again() -> None:
    applied = {**STOPPED, "waves": {n: {**w, "status": "Completed"}
                                    for n, w in STOPPED["waves"].items()}}
    st = stack_status(stack_file("prod"), applied, LAST)
    assert st.waiting_approval == []
    assert {r[2]: r[7] for r in rows([st])} == {"s1": "yes", "s3": "yes", "s4": "yes"}
    assert "waits for approval" not in render_table([st])
