"""Every planned object carries its own Pulumi options, so the registrar decides none:
what the cluster owns, what is kept on delete, who owns what, what waits for which
aggregated-role guard, and which Deployments a wave gate waits for instead of the
provider."""

from __future__ import annotations

import pytest

from config.fleet import parse_fleet_config
from fleet import plan_fleet
from fleet.objects import APPLY_ANNOTATIONS
from fleet.plan import PlannedObject, Role
from knative.plan import Stage
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile

SKIP_AWAIT = "pulumi.com/skipAwait"


def install(serving: dict | None = None, eventing: dict | None = None, rollout: bool = False):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": "s", "clusterProfileRef": {"name": "s", "namespace": "f"},
                   "serving": serving, "eventing": eventing}],
        **({"rollout": {"waves": [{"name": "only"}]}} if rollout else {})})
    spoke = plan_fleet(cfg, FakeInventory([profile("s")])).spokes["s"]
    assert spoke.install is not None
    return spoke.install


def objects(inst, stage: Stage | None = None) -> list[PlannedObject]:
    return [o for c in inst.components for s in c.stages for o in s.objects
            if stage is None or s.stage is stage]


def test_every_object_is_applied_with_one_field_manager_and_force():
    inst = install(serving={"version": "1.23"})
    # An aggregated role in a stage stands for the one its guard registered.
    applied = [o for o in objects(inst) if o.role is not Role.AGGREGATED]
    assert inst.guards
    for obj in applied + [g.role for g in inst.guards]:
        annotations = obj.body["metadata"]["annotations"]
        assert {k: annotations[k] for k in APPLY_ANNOTATIONS} == APPLY_ANNOTATIONS, obj.name
        assert obj.name.startswith("s:")


@pytest.mark.parametrize("delete_crds", [False, True])
def test_crds_are_kept_on_delete_unless_the_spec_says_so(delete_crds):
    inst = install(serving={"version": "1.23", "deleteCrdsOnDestroy": delete_crds})
    crds = objects(inst, Stage.CRDS)
    assert crds and all(o.retain_on_delete is (not delete_crds) for o in crds)
    assert all(o.retain_on_delete is None for o in objects(inst, Stage.NAMESPACED))


def test_namespace_labels_are_not_diffed_and_namespaced_objects_are_owned():
    inst = install(serving={"version": "1.23"})
    (namespace,) = objects(inst, Stage.NAMESPACE)
    assert namespace.ignore_changes == ("metadata.labels", "metadata.annotations")
    (anchor,) = objects(inst, Stage.ANCHOR)
    assert anchor.role is Role.ANCHOR and not anchor.owned
    owned = objects(inst, Stage.NAMESPACED) + objects(inst, Stage.DEPLOYMENTS)
    assert owned and all(o.owned for o in owned)
    assert not any(o.owned for o in objects(inst, Stage.CLUSTER) + objects(inst, Stage.CRDS))
    stages = {s.stage: s for c in inst.components for s in c.stages}
    assert [s for s, st in stages.items() if st.readiness] == [Stage.DEPLOYMENTS]


def test_aggregated_roles_are_guarded_retained_and_their_rules_left_to_the_cluster():
    inst = install(eventing={"version": "1.23"})
    assert inst.sweep_name == "s:aggregated-clusterroles"
    guarded = {g.role.object_name for g in inst.guards}
    assert "addressable-resolver" in guarded
    assert set(inst.sweep_roles) == guarded
    for guard in inst.guards:
        assert guard.name == f"s:{guard.role.object_name}"
        assert guard.role.retain_on_delete is True
        assert guard.role.ignore_changes == ("rules",)
    in_stages = [o for o in objects(inst) if o.role is Role.AGGREGATED]
    assert {o.object_name for o in in_stages} == guarded
    feeders = [o for o in objects(inst, Stage.CLUSTER) if o.guards]
    assert feeders and all(set(o.guards) <= guarded for o in feeders)


def test_the_pingsource_adapter_leaves_controller_filled_fields_to_the_cluster():
    inst = install(eventing={"version": "1.23"})
    (adapter,) = [o for o in objects(inst, Stage.DEPLOYMENTS)
                  if o.object_name == "pingsource-mt-adapter"]
    assert adapter.ignore_changes and adapter.ignore_changes[0] == "spec.replicas"


@pytest.mark.parametrize("rollout", [False, True])
def test_a_wave_gate_not_the_provider_waits_for_the_deployments(rollout):
    """Except for the webhooks': the release's custom resources go through them."""
    inst = install(serving={"version": "1.23"}, eventing={"version": "1.23"},
                   rollout=rollout)
    deployments = objects(inst, Stage.DEPLOYMENTS)
    assert inst.gated is rollout
    webhooks = {"webhook", "eventing-webhook", "imc-controller"}  # in-memory channel's
    assert {o.object_name for o in deployments} >= webhooks
    assert all((SKIP_AWAIT in o.body["metadata"]["annotations"])
               is (rollout and o.object_name not in webhooks) for o in deployments)
    assert inst.deployments == tuple(sorted(
        f"{o.body['metadata']['namespace']}/{o.object_name}" for o in deployments))
