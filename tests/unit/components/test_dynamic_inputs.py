"""One contract per dynamic resource: for the same plan, the inputs the registrar
registers (under Pulumi mocks) are the inputs the offline review plans, and both sides
take them from the same function, so an input added to one cannot miss the other."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from components import fleet as fleet_mod
from config.fleet import parse_fleet_config
from core import crd_manifest
from core.resource_types import (
    AGGREGATED_ROLE_GUARD,
    AGGREGATED_ROLE_SWEEP,
    APPROVAL_GATE,
    CLUSTER_RBAC,
    CRDS_FIRST,
    DYNAMIC_KINDS,
    MEMBERSHIP,
    NAMESPACED_OBJECTS,
    SPOKE_OWNER_GUARD,
    WAVE_GATE,
    WEBHOOKS_FIRST,
)
from fleet import crds_first, held_namespaced, held_rbac, plan_fleet
from fleet import waves as planned_waves
from fleet.plan import FleetPlan
from lab.paths import RELEASES
from lifecycle import aggregated_roles, membership, owner_guard, wave_gate, webhooks_first
from ownership.identity import StackIdentity
from review.offline.preview import UNKNOWN, preview_document
from review.offline.state import SECRET_SIG, LastState
from tests.support.factories import FakeInventory, profile

PROFILES = [profile("s1", ring="canary"), profile("s2", ring="main")]
OWNER = StackIdentity("kf-" + "1" * 32, "organization/knative-fleet/stack")

# Each kind's inputs function, by the module and name both call sites look it up by.
FUNCTIONS: dict[str, tuple[Any, str]] = {
    MEMBERSHIP.type: (membership, "membership_inputs"),
    APPROVAL_GATE.type: (planned_waves, "approval_inputs"),
    WAVE_GATE.type: (wave_gate, "gate_inputs"),
    AGGREGATED_ROLE_SWEEP.type: (aggregated_roles, "sweep_inputs"),
    AGGREGATED_ROLE_GUARD.type: (aggregated_roles, "guard_inputs"),
    CRDS_FIRST.type: (crds_first, "step_inputs"),
    CLUSTER_RBAC.type: (held_rbac, "step_inputs"),
    NAMESPACED_OBJECTS.type: (held_namespaced, "step_inputs"),
    WEBHOOKS_FIRST.type: (webhooks_first, "step_inputs"),
    SPOKE_OWNER_GUARD.type: (owner_guard, "guard_inputs"),
}


def plan() -> FleetPlan:
    """Two gated waves, the second behind an approval gate, each spoke with Serving and
    Eventing (aggregated roles, CRDs, webhook configurations) and an owner guard."""
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"},
                   "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}
                  for p in PROFILES],
        "rollout": {"waves": [
            {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
            {"name": "main", "approval": "Required",
             "selector": {"matchLabels": {"ring": "main"}}}]}})
    return plan_fleet(cfg, FakeInventory(PROFILES), owner=OWNER)


def sent(value: Any) -> Any:
    """The value as the engine receives it, each secret envelope opened: a None in a
    dict is not sent, a tuple is a list."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            return sent(value["value"])
        return {k: sent(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [sent(v) for v in value]
    return value


class Engine(pulumi.runtime.Mocks):
    """Records each dynamic resource's inputs by (type, name), without its pickled
    provider (the review copies the state's)."""

    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], dict[str, Any]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if args.typ in FUNCTIONS:
            self.inputs[(args.typ, args.name)] = sent(
                {k: v for k, v in args.inputs.items() if k != "__provider"})
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def registered(fleet_plan: FleetPlan) -> dict[tuple[str, str], dict[str, Any]]:
    """What a preview registers for each dynamic resource (mocks: stack `stack` of
    project `project`)."""
    engine = Engine()
    pulumi.runtime.set_mocks(engine, preview=True)

    @pulumi.runtime.test
    def program() -> None:
        fleet_mod.register_fleet(fleet_plan)

    program()
    return engine.inputs


def reviewed(fleet_plan: FleetPlan) -> dict[tuple[str, str], dict[str, Any]]:
    """What the offline review plans for each dynamic resource, on a new stack."""
    doc = preview_document(fleet_plan, LastState({}, None), "project", "stack")
    return {(s["newState"]["type"], s["urn"].rsplit("::", 1)[1]): s["newState"]["inputs"]
            for s in doc["steps"] if s["newState"]["type"] in FUNCTIONS}


def _recording(kind: str, real: Callable[..., Any], calls: dict[str, set[str]],
               side: dict[str, str]) -> Callable[..., Any]:
    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls[kind].add(side["now"])
        return real(*args, **kwargs)

    return recorded


@pytest.fixture(scope="module")
def planned_twice() -> tuple[dict, dict, dict[str, set[str]]]:
    """The inputs each side plans for one plan, and which side called each kind's
    function (each function wrapped to record its caller)."""
    calls: dict[str, set[str]] = {kind: set() for kind in FUNCTIONS}
    side = {"now": ""}
    with pytest.MonkeyPatch.context() as patch:
        for kind, (module, name) in FUNCTIONS.items():
            patch.setattr(module, name, _recording(kind, getattr(module, name), calls, side))
        fleet_plan = plan()
        side["now"] = "run"
        run = registered(fleet_plan)
        side["now"] = "review"
        review = reviewed(fleet_plan)
    return run, review, calls


def test_every_dynamic_kind_has_one_inputs_function() -> None:
    assert set(FUNCTIONS) == {k.type for k in DYNAMIC_KINDS}


@pytest.mark.parametrize("kind", DYNAMIC_KINDS, ids=lambda k: k.name)
def test_both_sides_build_the_inputs_with_the_same_function(planned_twice, kind) -> None:
    assert planned_twice[2][kind.type] == {"run", "review"}


@pytest.mark.parametrize("kind", DYNAMIC_KINDS, ids=lambda k: k.name)
def test_the_registrar_and_the_review_plan_the_same_inputs(planned_twice, kind) -> None:
    run, review, _ = planned_twice
    names = {n for t, n in run if t == kind.type}
    assert names and names == {n for t, n in review if t == kind.type}
    for name in names:
        inputs, planned = dict(run[(kind.type, name)]), dict(review[(kind.type, name)])
        if kind is WAVE_GATE:
            # The digest of the batch's applied objects: an Output in the run, unknown
            # in the review of a new stack.
            assert planned.pop("changes") == UNKNOWN
            inputs.pop("changes")
        if kind is NAMESPACED_OBJECTS:
            # The bodies carry the anchor's uid: an output in the run (None under mocks),
            # unknown in the review of a new stack; both hold the objects they name.
            assert planned.pop("digest") == planned.pop("manifest") == UNKNOWN
            inputs.pop("digest")
            bodies = crd_manifest.decode(inputs.pop("manifest"))
            assert [crd_manifest.held_key(b) for b in bodies] == inputs["objects"]
        assert inputs == sent(planned), name
