"""An `up` that stops before a wave waiting for approval, under Pulumi mocks answering
the engine's `pulumi:pulumi:readStackOutputs`: it knows so before it registers anything
(the stack output `approvals` it reads), registers the waves before that wave only, and
fails by itself after exporting outputs that say so: `waves` WaitingForApproval for the
wave and NotStarted after it, their spokes as the last recorded run left them. A step
that fails stops the engine before the program's outputs reach it; the program's own
failure does not, so these outputs are what `pulumi stack output` then shows. Where the
record cannot tell, the gate is registered and its own step decides, as before."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components import fleet as fleet_mod
from components.stack_identity import READ_STACK_OUTPUTS
from config.fleet import parse_fleet_config
from fleet import plan_fleet
from lab.paths import RELEASES
from rollout.approval import waiting_message
from tests.support.factories import FakeInventory, profile

PROFILES = [profile("s1", ring="canary"), profile("s2", ring="main"),
            profile("s3", ring="rest")]
WAVES = [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
         {"name": "main", "approval": "Required", "selector": {"matchLabels": {"ring": "main"}}},
         {"name": "rest"}]
WAITING = waiting_message("main", ["s2"], ["rest"])


class Engine(pulumi.runtime.Mocks):
    """Every resource's outputs are its inputs; readStackOutputs answers `outputs`, or
    fails as the engine does when the backend cannot be read (`outputs` None)."""

    def __init__(self, outputs: dict | None) -> None:
        self.outputs = outputs
        self.reads = 0
        self.registered: list[tuple[str, str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.registered.append((args.typ, args.name))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        assert args.token == READ_STACK_OUTPUTS
        self.reads += 1
        if self.outputs is None:
            return {}, [("name", "failed to load checkpoint: dial tcp: i/o timeout")]
        return {"name": args.args["name"], "outputs": self.outputs, "secretOutputNames": []}

    def names(self) -> set[str]:
        return {n for _, n in self.registered}

    def spokes(self) -> set[str]:
        return {n.split(":", 1)[0] for t, n in self.registered
                if t == "knative-fleet:index:Spoke" or ":" in n}


def plan(serving: dict | None = None, broken: dict | None = None):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"},
                   "serving": (serving or {}).get(p["metadata"]["name"], {"version": "1.23"})}
                  for p in PROFILES],
        "rollout": {"waves": WAVES}})
    return plan_fleet(cfg, FakeInventory(PROFILES, broken=broken))


def digest_of_main() -> str:
    return next(w for w in plan().waves if w.name == "main").approval.changes


# What the stack's last recorded run left: main applied with an older digest, its spoke
# running 1.22.1.
LAST = {"ring": 1, "ownerId": "kf-" + "1" * 32,
        "waves": {"canary": {"spokes": ["s1"], "status": "Completed"},
                  "main": {"spokes": ["s2"], "status": "Completed"},
                  "rest": {"spokes": ["s3"], "status": "Completed"}},
        "approvals": {"main": "sha256:before"},
        "spokes": {"s2": {"wave": "main", "serving": "1.22.1", "eventing": None,
                          "ready": True}}}


@pytest.fixture()
def exported(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What the program exports; no approval unless a test gives one."""
    monkeypatch.delenv("KNATIVE_FLEET_APPROVE", raising=False)
    seen: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda key, value: seen.__setitem__(key, value))
    return seen


def engine(outputs: dict | None, preview: bool = False) -> Engine:
    mocks = Engine(outputs)
    pulumi.runtime.set_mocks(mocks, preview=preview)
    return mocks


def resolved(value: Any, check: Callable[[Any], None]) -> pulumi.Output:
    """`check` of the exported value with every Output in it resolved."""
    return pulumi.Output.from_input(value).apply(check)


@pulumi.runtime.test
def test_an_up_stops_before_the_waiting_wave_and_records_why(exported):
    mocks = engine(LAST)
    with pytest.raises(pulumi.RunError) as stopped:
        fleet_mod.register_fleet(plan())
    assert str(stopped.value) == WAITING
    assert mocks.reads == 1

    def check(out: dict) -> None:
        # Nothing of the waiting wave or the wave after it is registered, not even its
        # gate: the failed run deletes nothing, so they keep their objects.
        assert "approval-main" not in mocks.names()
        assert "wave-canary" in mocks.names() and "wave-main" not in mocks.names()
        assert mocks.spokes() & {"s1", "s2", "s3"} == {"s1"}
        waves, spokes = out["waves"], out["spokes"]
        assert {n: w["status"] for n, w in waves.items()} == {
            "canary": "Completed", "main": "WaitingForApproval", "rest": "NotStarted"}
        assert out["approvals"] == {"main": "sha256:before"}  # still what its gate holds
        # The waiting wave's spoke as the last update left it, not as planned.
        assert spokes["s2"]["serving"] == "1.22.1" and spokes["s2"]["ready"] is True
        assert spokes["s2"]["wave"] == "main"
        assert spokes["s2"]["targetClusterResolved"]["status"] == "True"
        # A spoke the last recorded run did not hold: nothing installed, not ready.
        assert spokes["s3"]["serving"] is None and spokes["s3"]["ready"] is False
        assert spokes["s1"]["serving"] == "1.23.0"  # the wave before it is applied

    return resolved(dict(exported), check)


@pulumi.runtime.test
def test_the_approved_up_applies_the_wave_and_records_its_digest(exported, monkeypatch):
    monkeypatch.setenv("KNATIVE_FLEET_APPROVE", "main")
    mocks = engine(LAST)
    fleet_mod.register_fleet(plan())

    def check(out: dict) -> None:
        assert "approval-main" in mocks.names()
        assert mocks.spokes() & {"s1", "s2", "s3"} == {"s1", "s2", "s3"}
        assert {n: w["status"] for n, w in out["waves"].items()} == {
            "canary": "Completed", "main": "Completed", "rest": "Completed"}
        assert out["approvals"] == {"main": digest_of_main()}
        assert out["spokes"]["s2"]["serving"] == "1.23.0"

    return resolved(dict(exported), check)


@pulumi.runtime.test
def test_an_unchanged_wave_runs_to_the_end_without_approval(exported):
    mocks = engine({**LAST, "approvals": {"main": digest_of_main()}})
    fleet_mod.register_fleet(plan())

    def check(out: dict) -> None:
        assert "approval-main" in mocks.names()  # unchanged: its step does not run
        assert mocks.spokes() & {"s1", "s2", "s3"} == {"s1", "s2", "s3"}
        assert {w["status"] for w in out["waves"].values()} == {"Completed"}
        assert out["approvals"] == {"main": digest_of_main()}

    return resolved(dict(exported), check)


@pulumi.runtime.test
def test_a_new_stack_waits_for_the_first_approval(exported):
    engine({})
    with pytest.raises(pulumi.RunError, match="wave 'main' waits for approval"):
        fleet_mod.register_fleet(plan())

    def check(out: dict) -> None:
        assert out["waves"]["main"]["status"] == "WaitingForApproval"
        assert out["approvals"] == {}  # no gate let anything through yet
        assert out["spokes"]["s2"]["ready"] is False

    return resolved(dict(exported), check)


@pytest.mark.parametrize("outputs", [
    {key: value for key, value in LAST.items() if key != "approvals"},  # kept no record
    None,  # the engine could not read them
])
@pulumi.runtime.test
def test_without_a_record_the_gates_own_step_decides(exported, outputs):
    mocks = engine(outputs)
    fleet_mod.register_fleet(plan())  # the gate's step, in the engine, fails if need be

    def check(out: dict) -> None:
        assert mocks.reads == 1
        assert "approval-main" in mocks.names()
        assert mocks.spokes() & {"s1", "s2", "s3"} == {"s1", "s2", "s3"}
        assert out["approvals"] == {"main": digest_of_main()}

    return resolved(dict(exported), check)


@pulumi.runtime.test
def test_a_preview_reads_nothing_and_plans_every_wave(exported):
    mocks = engine(LAST, preview=True)
    fleet_mod.register_fleet(plan())

    def check(_: dict) -> None:
        assert mocks.reads == 0
        assert "approval-main" in mocks.names()
        assert mocks.spokes() & {"s1", "s2", "s3"} == {"s1", "s2", "s3"}

    return resolved(dict(exported), check)


@pulumi.runtime.test
def test_a_stack_without_an_approval_wave_reads_nothing_more(exported, monkeypatch):
    from components import approval_gate

    monkeypatch.setattr(approval_gate, "_last_outputs",
                        lambda: pytest.fail("read without an approval gate"))
    engine(LAST)
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": "s1", "clusterProfileRef": {"name": "s1", "namespace": "f"}}],
        "rollout": {"waves": [{"name": "all"}]}})
    fleet_mod.register_fleet(plan_fleet(cfg, FakeInventory(PROFILES)))
    return resolved(dict(exported), lambda out: out["approvals"] == {} or pytest.fail(
        str(out["approvals"])))


@pulumi.runtime.test
def test_a_run_that_also_fails_says_both_and_is_no_mere_wait(exported):
    engine(LAST)
    with pytest.raises(pulumi.RunError) as failed:
        fleet_mod.register_fleet(plan(broken={"s3": "ClusterProfileNotFound"}))
    first, second = str(failed.value).split("\n")
    assert first.startswith("1 of 3 spokes could not be resolved: s3")
    assert second == WAITING

    def check(out: dict) -> None:
        assert out["waves"]["main"]["status"] == "WaitingForApproval"
        assert out["spokes"]["s3"]["targetClusterResolved"]["status"] == "False"
        assert out["spokes"]["s3"]["ready"] is False

    return resolved(dict(exported), check)


def test_the_record_is_carried_only_for_waves_the_run_did_not_start():
    """Their gates are kept as they were (the run fails); a started wave without a gate
    has none once the run succeeds (the engine deletes what it did not register)."""
    from components.waves import Registered

    steps = plan().waves
    recorded = {"main": "sha256:a", "rest": "sha256:b", "gone": "sha256:c"}
    assert Registered(left_out=["main", "rest"]).approvals_output(steps, recorded) == {
        "main": "sha256:a", "rest": "sha256:b"}
    assert Registered().approvals_output(steps, recorded) == {}
    assert Registered(left_out=["main", "rest"]).approvals_output(steps, None) == {}


def test_the_gates_module_loads_without_the_plan_or_the_kubernetes_client() -> None:
    """Every preview starts the dynamic provider and unpickles the gate's provider from
    this module; the program's side of it imports the plan only when it runs."""
    code = ("import sys, components.approval_gate; print(sorted({m.split('.')[0] for m in "
            "sys.modules} & {'kubernetes', 'pydantic', 'access', 'knative', 'fleet'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).parents[3],
                         check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


@pulumi.runtime.test
def test_the_outputs_the_pipeline_read_are_not_read_again(exported):
    mocks = engine({})  # what a second read would answer: no record, a new stack
    with pytest.raises(pulumi.RunError) as stopped:
        fleet_mod.register_fleet(plan(), last_outputs=LAST)
    assert str(stopped.value) == WAITING  # LAST's record decided, not the engine's
    assert mocks.reads == 0
    return resolved(dict(exported), lambda out: out["approvals"] == {
        "main": "sha256:before"} or pytest.fail(str(out["approvals"])))
