"""The CRDs-first step as plain data: each component with CRDs gets one, it holds its
CRDs (no typed resource imports or creates them), deletes them on destroy only when the
entry says so, and the bodies travel packed, the same in every process."""

from __future__ import annotations

import pytest

from core import crd_manifest
from fleet import crds_first, plan_fleet
from fleet.plan import Role
from tests.support.factories import FakeInventory, two_spoke_fleet


@pytest.fixture(scope="module")
def installs():
    plan = plan_fleet(two_spoke_fleet(), FakeInventory())
    return {name: s.install for name, s in plan.spokes.items()}


def test_each_component_with_crds_gets_a_step(installs) -> None:
    steps = {c.crds_first for i in installs.values() for c in i.components}
    assert steps == {"spoke-a:knative-serving/crds-first", "spoke-a:knative-eventing/crds-first",
                     "spoke-b:knative-serving/crds-first"}


def test_the_crds_are_the_steps_with_the_servers_defaults(installs) -> None:
    for install in installs.values():
        for component in install.components:
            crds = crds_first.crd_objects(component)
            assert crds and component.crds_first
            for obj in crds:
                assert obj.role is Role.PLAIN
                assert obj.server_defaults, obj.name
                assert obj.retain_on_delete is True  # the default keeps them
            inputs = crds_first.step_inputs(component, "s", {"server": "s"}, 5.0)
            assert crd_manifest.DELETE_ON_DESTROY not in inputs


def test_the_step_deletes_on_destroy_only_when_the_entry_says_so() -> None:
    from config.fleet import parse_fleet_config
    from lab.paths import RELEASES

    fleet = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": [
        {"name": "spoke-a", "clusterProfileRef": {"name": "a", "namespace": "f"},
         "serving": {"version": "1.23", "deleteCrdsOnDestroy": True},
         "eventing": {"version": "1.23"}}]})
    plan = plan_fleet(fleet, FakeInventory())
    for spoke in plan.spokes.values():
        for component in spoke.install.components:
            inputs = crds_first.step_inputs(component, "s", {"server": "s"}, 5.0)
            deletes = component.component == "serving"
            assert inputs.get(crd_manifest.DELETE_ON_DESTROY, False) is deletes
            assert crds_first.deletes_on_destroy(crds_first.crd_objects(component)) is deletes


def test_the_inputs_hold_the_bodies_the_typed_held_apply(installs) -> None:
    component = installs["spoke-a"].components[0]
    inputs = crds_first.step_inputs(component, "spoke-a", {"server": "s"}, 5.0)
    bodies = [o.registered_body for o in crds_first.crd_objects(component)]
    assert crd_manifest.decode(inputs["manifest"]) == bodies
    # As the API server stores them (knative.crd_defaults): an import of each equals it.
    assert all(b["spec"]["names"]["listKind"] and b["spec"]["conversion"] for b in bodies)
    assert inputs["crds"] == [b["metadata"]["name"] for b in bodies]
    assert all(b["metadata"]["annotations"]["pulumi.com/patchFieldManager"] == "knative-fleet"
               for b in bodies)
    assert inputs["id"] == component.crds_first
    assert (inputs["spoke"], inputs["connection"], inputs["pluginTimeoutSeconds"]) == (
        "spoke-a", {"server": "s"}, 5.0)


def test_the_same_bodies_pack_the_same_and_another_body_digests_otherwise() -> None:
    one = [{"metadata": {"name": "a.x"}, "spec": {"b": 1, "a": 2}}]
    same = [{"spec": {"a": 2, "b": 1}, "metadata": {"name": "a.x"}}]
    crd_manifest._packed.cache_clear()
    assert crd_manifest.encode(one) == crd_manifest.encode(same)
    assert crd_manifest.encode(one)[0] != crd_manifest.encode([{**one[0], "spec": {}}])[0]
    assert crd_manifest.encode(one)[0].startswith("sha256:")


def test_a_manifest_that_is_not_a_list_of_objects_is_refused() -> None:
    _, manifest = crd_manifest.encode([1, 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not a list of objects"):
        crd_manifest.decode(manifest)
