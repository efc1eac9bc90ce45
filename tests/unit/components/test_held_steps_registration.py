"""Each component's CRDs and cluster RBAC held by their steps, under Pulumi mocks: each
step is registered with the objects it applies, no typed CRD, and no typed ClusterRole or
ClusterRoleBinding but the aggregated roles, is registered, and the typed ones an earlier
release's state holds and would delete (components.held_typed) are registered as they
were, kept on delete, after their step; the `typedHeld` output says whether any was."""

from __future__ import annotations

import pulumi
import pytest

from components import fleet as fleet_mod
from core import crd_manifest
from core.resource_types import (
    CLUSTER_RBAC,
    CLUSTER_ROLE_BINDING_TYPE,
    CLUSTER_ROLE_TYPE,
    CRD_TYPE,
    CRDS_FIRST,
    HELD_TYPES,
    NAMESPACED_OBJECTS,
)
from fleet import plan_fleet
from fleet.held_namespaced import HELD_KINDS
from fleet.held_typed import HELD_OUTPUT, typed_key
from tests.support.factories import FakeInventory, two_spoke_fleet

SEEN: list[pulumi.runtime.MockResourceArgs] = []
EXPORTED: dict[str, object] = {}


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        SEEN.append(args)
        return args.resource_id or f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def _register(preview: bool, typed: dict[str, frozenset[str]] | None = None,
              monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[pulumi.Output, dict]:
    SEEN.clear()
    EXPORTED.clear()
    assert monkeypatch is not None
    monkeypatch.setattr(pulumi, "export", EXPORTED.__setitem__)
    monkeypatch.setattr(fleet_mod.pulumi, "export", EXPORTED.__setitem__)
    pulumi.runtime.set_mocks(Mocks(), preview=preview)
    spokes = fleet_mod.register_fleet(plan_fleet(two_spoke_fleet(), FakeInventory()),
                                      typed_held=typed)
    return pulumi.Output.all(*[s.ready for s in spokes.values()]), spokes


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
@pulumi.runtime.test
def test_the_step_holds_the_crds_and_no_typed_crd_is_registered(preview, monkeypatch):
    ready, spokes = _register(preview, monkeypatch=monkeypatch)

    def check(_):
        steps = {a.name: a for a in SEEN if a.typ == CRDS_FIRST.type}
        assert set(steps) == {"spoke-a:knative-serving/crds-first",
                              "spoke-a:knative-eventing/crds-first",
                              "spoke-b:knative-serving/crds-first"}
        assert [a for a in SEEN if a.typ == CRD_TYPE] == []
        step = steps["spoke-a:knative-serving/crds-first"]
        bodies = crd_manifest.decode(step.inputs["manifest"])
        assert [b["metadata"]["name"] for b in bodies] == step.inputs["crds"]
        assert "services.serving.knative.dev" in step.inputs["crds"]
        assert step.inputs["spoke"] == "spoke-a"
        spoke = spokes["spoke-a"]
        assert len(spoke._held) == len(spoke.held_steps) == 6
        assert EXPORTED[HELD_OUTPUT] == list(HELD_TYPES)

    return ready.apply(check)


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
@pulumi.runtime.test
def test_the_step_holds_the_cluster_rbac_and_only_aggregated_roles_are_typed(
        preview, monkeypatch):
    ready, spokes = _register(preview, monkeypatch=monkeypatch)

    def check(_):
        steps = {a.name: a for a in SEEN if a.typ == CLUSTER_RBAC.type}
        assert set(steps) == {"spoke-a:knative-serving/cluster-rbac",
                              "spoke-a:knative-eventing/cluster-rbac",
                              "spoke-b:knative-serving/cluster-rbac"}
        assert [a for a in SEEN if a.typ == CLUSTER_ROLE_BINDING_TYPE] == []
        typed_roles = [a for a in SEEN if a.typ == CLUSTER_ROLE_TYPE]
        assert typed_roles and all("aggregationRule" in a.inputs for a in typed_roles)
        step = steps["spoke-a:knative-serving/cluster-rbac"]
        bodies = crd_manifest.decode(step.inputs["manifest"])
        assert [f"{b['kind']}/{b['metadata']['name']}" for b in bodies] == \
            step.inputs["objects"]
        assert "ClusterRoleBinding/knative-serving-controller-admin" in step.inputs["objects"]
        assert not any("aggregationRule" in b for b in bodies)
        # Applied as the typed resources were: the fleet's field manager, forced.
        assert all(b["metadata"]["annotations"]["pulumi.com/patchFieldManager"]
                   == "knative-fleet" for b in bodies)

    return ready.apply(check)


@pulumi.runtime.test
def test_typed_held_the_state_would_delete_are_registered_kept_on_delete(monkeypatch):
    names = {CRD_TYPE: ["spoke-a:services.serving.knative.dev",
                        "spoke-a:brokers.eventing.knative.dev"],
             CLUSTER_ROLE_BINDING_TYPE: ["spoke-a:knative-serving-controller-admin"],
             # Of the ServiceAccount, the Service and the Deployment `controller` (one
             # resource name), only the ServiceAccount's typed resource is in the state.
             "kubernetes:core/v1:ServiceAccount": ["spoke-a:knative-serving/controller"]}
    typed = frozenset(typed_key(t, n) for t, ns in names.items() for n in ns)
    ready, spokes = _register(False, {"spoke-a": typed}, monkeypatch)

    def check(_):
        held = {a.name: a for a in SEEN if a.typ in (
            CRD_TYPE, CLUSTER_ROLE_BINDING_TYPE, "kubernetes:core/v1:ServiceAccount")}
        # Matched by type and name: the Service `controller`, held by the step and not
        # typed in the state, is not registered typed.
        assert sorted(a.typ for a in SEEN if a.name == "spoke-a:knative-serving/controller"
                      and a.typ.startswith("kubernetes:core/")) == [
            "kubernetes:core/v1:ServiceAccount"]
        assert {typed_key(a.typ, n) for n, a in held.items()} == typed
        for res in held.values():
            assert res.resource_id in (None, "")  # as the state holds it: no import
            assert res.inputs["metadata"]["name"] == res.name.partition(":")[2].rpartition(
                "/")[2]
        # An owned one as the state holds it: with the anchor's owner reference.
        account = held["spoke-a:knative-serving/controller"].inputs["metadata"]
        assert account["ownerReferences"][0]["name"] == \
            "knativeserving-knative-serving-root-owner"
        spoke = spokes["spoke-a"]
        # Not among the objects a wave gate digests; the owner guard waits for them.
        steps = set(spoke.held_steps)
        assert not any(r in spoke.registered for r in spoke._held if r not in steps)
        assert len(spoke._held) == 6 + 4
        assert spoke.typed_registered == 4
        assert EXPORTED[HELD_OUTPUT] is False

    steps = [r.id for spoke in spokes.values() for r in spoke._held]
    return pulumi.Output.all(ready, *steps).apply(check)


@pulumi.runtime.test
def test_the_step_holds_the_owned_accounts_roles_bindings_and_services(monkeypatch):
    ready, spokes = _register(False, monkeypatch=monkeypatch)

    def check(_):
        steps = {a.name: a for a in SEEN if a.typ == NAMESPACED_OBJECTS.type}
        assert set(steps) == {"spoke-a:knative-serving/namespaced-objects",
                              "spoke-a:knative-eventing/namespaced-objects",
                              "spoke-b:knative-serving/namespaced-objects"}
        # No typed ServiceAccount or Service; the only typed Roles and RoleBindings are
        # the Secret reads' (not the anchor's).
        typed = [a for a in SEEN if a.typ.rsplit(":", 1)[-1] in HELD_KINDS]
        assert {a.typ.rsplit(":", 1)[-1] for a in typed} == {"Role", "RoleBinding"}
        assert all(a.name.endswith("/knative-fleet-secret-reads") for a in typed)
        step = steps["spoke-a:knative-serving/namespaced-objects"]
        bodies = crd_manifest.decode(step.inputs["manifest"])
        # Owned by the anchor, as the anchor's registered id and metadata give it.
        assert all(b["metadata"]["ownerReferences"][0]["name"]
                   == "knativeserving-knative-serving-root-owner" for b in bodies)
        assert "Service/knative-serving/activator-service" in step.inputs["objects"]

    # The step waits for the anchor's uid: check once it is registered too.
    steps = [s.id for spoke in spokes.values() for s in spoke.held_steps]
    return pulumi.Output.all(ready, *steps).apply(check)
