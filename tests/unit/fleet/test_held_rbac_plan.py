"""The cluster-RBAC step as plain data: each component's step holds exactly its
non-aggregated ClusterRoles and ClusterRoleBindings of the cluster stage, in order, the
bodies packed with the apply annotations and named `Kind/name`, the same digest in every
process; `typed_kept` registers them all typed again."""

from __future__ import annotations

import pytest

from core import crd_manifest
from fleet import held_rbac, held_typed, plan_fleet
from fleet.plan import FleetPlan
from knative.plan import Stage
from tests.support.factories import FakeInventory, two_spoke_fleet

RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding")


def _plan() -> FleetPlan:
    return plan_fleet(two_spoke_fleet(), FakeInventory())


@pytest.fixture(scope="module")
def plan() -> FleetPlan:
    return _plan()


def _components(plan: FleetPlan):
    return [(name, c) for name, s in plan.spokes.items() if s.install is not None
            for c in s.install.components]


def _cluster_rbac(component) -> list[dict]:
    """Every ClusterRole and ClusterRoleBinding of the component's cluster stage, in
    registration order, aggregated ones included."""
    return [o.body for s in component.stages if s.stage is Stage.CLUSTER
            for o in s.objects if o.body["kind"] in RBAC_KINDS]


def test_each_component_gets_a_step_named_for_its_spoke_and_namespace(plan) -> None:
    steps = {c.cluster_rbac for _, c in _components(plan)}
    assert steps == {"spoke-a:knative-serving/cluster-rbac",
                     "spoke-a:knative-eventing/cluster-rbac",
                     "spoke-b:knative-serving/cluster-rbac"}
    assert held_rbac.step_name("s", "knative-serving") == "s:knative-serving/cluster-rbac"


def test_the_step_holds_the_non_aggregated_roles_and_bindings_in_order(plan) -> None:
    for _, component in _components(plan):
        every = _cluster_rbac(component)
        held = [o.body for o in held_rbac.held_objects(component)]
        assert held == [b for b in every if "aggregationRule" not in b]
        # The exclusion is real: each component has aggregated roles, none of them held.
        assert any("aggregationRule" in b for b in every)
        assert not any("aggregationRule" in b for b in held)
        assert {b["kind"] for b in held} == set(RBAC_KINDS)
        # Nothing of another stage, whatever its kind.
        assert not any(held_rbac.is_held(s.stage, o) for s in component.stages
                       if s.stage is not Stage.CLUSTER for o in s.objects)


def test_the_inputs_name_the_objects_of_the_manifest_with_the_apply_annotations(plan) -> None:
    for spoke, component in _components(plan):
        inputs = held_rbac.step_inputs(component, spoke, {"server": "s"}, 5.0)
        bodies = crd_manifest.decode(inputs["manifest"])
        assert bodies == [o.registered_body for o in held_rbac.held_objects(component)]
        assert inputs["objects"] == [f"{b['kind']}/{b['metadata']['name']}" for b in bodies]
        assert inputs["objects"] == [crd_manifest.held_key(b) for b in bodies]
        assert len(set(inputs["objects"])) == len(inputs["objects"])
        for body in bodies:
            annotations = body["metadata"]["annotations"]
            assert annotations["pulumi.com/patchFieldManager"] == "knative-fleet"
            assert annotations["pulumi.com/patchForce"] == "true"
        assert inputs["id"] == component.cluster_rbac
        assert (inputs["spoke"], inputs["connection"], inputs["pluginTimeoutSeconds"]) == (
            spoke, {"server": "s"}, 5.0)
        assert inputs["digest"] == crd_manifest.encode(bodies)[0]


def test_a_role_and_a_binding_of_the_same_name_are_two_objects(plan) -> None:
    eventing = next(c for s, c in _components(plan)
                    if s == "spoke-a" and c.component == "eventing")
    objects = held_rbac.step_inputs(eventing, "spoke-a", {}, 5.0)["objects"]
    assert {"ClusterRole/knative-eventing-job-sink",
            "ClusterRoleBinding/knative-eventing-job-sink"} <= set(objects)


def test_the_same_plan_gives_the_same_digest_and_another_release_another() -> None:
    def digests() -> dict[tuple[str, str], str]:
        return {(spoke, c.component): held_rbac.step_inputs(c, spoke, {}, 5.0)["digest"]
                for spoke, c in _components(_plan())}

    crd_manifest._packed.cache_clear()
    first = digests()
    crd_manifest._packed.cache_clear()
    assert digests() == first
    assert all(d.startswith("sha256:") for d in first.values())
    # spoke-a runs Serving 1.23, spoke-b 1.22: their roles' labels differ.
    assert first[("spoke-a", "serving")] != first[("spoke-b", "serving")]


def test_typed_kept_drops_every_step_and_says_so(plan) -> None:
    kept = held_typed.typed_kept(plan)
    assert [(c.cluster_rbac, c.namespaced_objects) for _, c in _components(kept)] == [
        (None, None)] * len(_components(plan))
    # Only the step goes: the rest of each component is as planned.
    assert [(c.stages, c.crds_first) for _, c in _components(kept)] == [
        (c.stages, c.crds_first) for _, c in _components(plan)]
    assert all(c.cluster_rbac for _, c in _components(plan))  # the plan itself is unchanged
    assert held_typed.keeps_typed(kept) is True
    assert held_typed.keeps_typed(plan) is False
    # Either step alone kept typed is enough to say so.
    import dataclasses
    one = {n: dataclasses.replace(s, install=dataclasses.replace(s.install, components=tuple(
        dataclasses.replace(c, namespaced_objects=None) for c in s.install.components)))
        for n, s in plan.spokes.items()}
    assert held_typed.keeps_typed(dataclasses.replace(plan, spokes=one)) is True
