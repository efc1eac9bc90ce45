"""The namespaced-objects step as plain data: each component's step holds exactly the
ServiceAccounts, Roles, RoleBindings and Services its anchor owns, in order, each body
with the owner reference it is given and named `Kind/namespace/name`; nothing a user's
spec shapes field by field (ConfigMaps, Deployments, ...), nor the Secret reads' Role and
RoleBinding, which the anchor does not own."""

from __future__ import annotations

import pytest

from core import crd_manifest
from fleet import held_namespaced, plan_fleet
from fleet.plan import FleetPlan
from knative import manifests
from knative.plan import Stage
from tests.support.factories import FakeInventory, two_spoke_fleet

OWNER = manifests.owner_reference("knativeserving-knative-serving-root-owner", "uid-1")


@pytest.fixture(scope="module")
def plan() -> FleetPlan:
    return plan_fleet(two_spoke_fleet(), FakeInventory())


def _components(plan: FleetPlan):
    return [(name, c) for name, s in plan.spokes.items() if s.install is not None
            for c in s.install.components]


def test_each_component_gets_a_step_named_for_its_spoke_and_namespace(plan) -> None:
    assert {c.namespaced_objects for _, c in _components(plan)} == {
        "spoke-a:knative-serving/namespaced-objects",
        "spoke-a:knative-eventing/namespaced-objects",
        "spoke-b:knative-serving/namespaced-objects"}


def test_the_step_holds_the_owned_accounts_roles_bindings_and_services(plan) -> None:
    for _, component in _components(plan):
        owned = [o.body for s in component.stages if s.stage is Stage.NAMESPACED
                 for o in s.objects if o.body["kind"] in held_namespaced.HELD_KINDS]
        held = [o.body for o in held_namespaced.held_objects(component)]
        assert held == owned and {b["kind"] for b in held} == set(held_namespaced.HELD_KINDS)
        # Not held: the spec-shaped kinds of the same stage, and the Secret reads' Role
        # and RoleBinding of the reads stage (not owned by the anchor).
        others = [o for s in component.stages for o in s.objects
                  if not held_namespaced.is_held(s.stage, o)]
        assert {o.body["kind"] for o in others} >= {"ConfigMap", "Deployment", "Role",
                                                    "RoleBinding"}
        assert not any(o.owned and o.body["kind"] in held_namespaced.HELD_KINDS
                       for o in others)


def test_the_inputs_hold_the_bodies_owned_by_the_anchor(plan) -> None:
    _, component = _components(plan)[0]
    inputs = held_namespaced.step_inputs(component, "spoke-a", {"server": "s"}, 30.0, OWNER)
    bodies = crd_manifest.decode(inputs["manifest"])
    assert [crd_manifest.held_key(b) for b in bodies] == inputs["objects"]
    assert all(b["metadata"]["ownerReferences"] == [OWNER] for b in bodies)
    assert "Service/knative-serving/activator-service" in inputs["objects"]
    assert "ServiceAccount/knative-serving/controller" in inputs["objects"]
    # Another anchor uid: other bodies, another digest; the same: the same digest.
    again = held_namespaced.step_inputs(component, "spoke-a", {"server": "s"}, 30.0, OWNER)
    other = held_namespaced.step_inputs(component, "spoke-a", {"server": "s"}, 30.0,
                                        {**OWNER, "uid": "uid-2"})
    assert again["digest"] == inputs["digest"] != other["digest"]
