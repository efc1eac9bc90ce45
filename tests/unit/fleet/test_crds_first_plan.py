"""The CRDs-first step as plain data: each component with CRDs gets one, its CRDs carry
their name as the id an `up` imports them by, and the bodies travel packed, the same in
every process."""

from __future__ import annotations

import pytest

from fleet import crds_first, plan_fleet
from fleet.plan import Role
from knative.plan import Stage
from tests.support.factories import FakeInventory, two_spoke_fleet


@pytest.fixture(scope="module")
def installs():
    plan = plan_fleet(two_spoke_fleet(), FakeInventory())
    return {name: s.install for name, s in plan.spokes.items()}


def test_each_component_with_crds_gets_a_step(installs) -> None:
    steps = {c.crds_first for i in installs.values() for c in i.components}
    assert steps == {"spoke-a:knative-serving/crds-first", "spoke-a:knative-eventing/crds-first",
                     "spoke-b:knative-serving/crds-first"}


def test_only_the_crds_are_imported_and_by_their_name(installs) -> None:
    for install in installs.values():
        for component in install.components:
            for stage in component.stages:
                for obj in stage.objects:
                    if stage.stage is Stage.CRDS:
                        assert obj.import_id == obj.object_name
                        assert obj.role is Role.PLAIN
                        assert obj.server_defaults, obj.name
                    else:
                        assert obj.import_id is None, obj.name


def test_the_inputs_hold_the_bodies_the_typed_crds_apply(installs) -> None:
    component = installs["spoke-a"].components[0]
    inputs = crds_first.step_inputs(component, "spoke-a", {"server": "s"}, 5.0)
    bodies = [o.registered_body for o in crds_first.crd_objects(component)]
    assert crds_first.decode(inputs["manifest"]) == bodies
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
    crds_first._packed.cache_clear()
    assert crds_first.encode(one) == crds_first.encode(same)
    assert crds_first.encode(one)[0] != crds_first.encode([{**one[0], "spec": {}}])[0]
    assert crds_first.encode(one)[0].startswith("sha256:")


def test_a_manifest_that_is_not_a_list_of_objects_is_refused() -> None:
    _, manifest = crds_first.encode([1, 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not a list of objects"):
        crds_first.decode(manifest)
