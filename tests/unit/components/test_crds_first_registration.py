"""Each component's CRDs held by its step, under Pulumi mocks: the step is registered
after the namespace with the CRDs it applies, no typed CRD resource is registered, and
the typed CRDs an earlier release's state holds and would delete (components.held_crds)
are registered as they were, kept on delete, after the step; the `crdsHeld` output says
whether any was."""

from __future__ import annotations

import pulumi
import pytest

from components import fleet as fleet_mod
from core import crd_manifest
from core.resource_types import CRDS_FIRST
from fleet import plan_fleet
from fleet.held_crds import HELD_OUTPUT
from tests.support.factories import FakeInventory, two_spoke_fleet

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
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
                                      typed_crds=typed)
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
        assert len(spoke._crds_first) == len(spoke.crd_steps) == 2
        assert EXPORTED[HELD_OUTPUT] is True

    return ready.apply(check)


@pulumi.runtime.test
def test_typed_crds_the_state_would_delete_are_registered_kept_on_delete(monkeypatch):
    typed = frozenset({"spoke-a:services.serving.knative.dev",
                       "spoke-a:brokers.eventing.knative.dev"})
    ready, spokes = _register(False, {"spoke-a": typed}, monkeypatch)

    def check(_):
        crds = {a.name: a for a in SEEN if a.typ == CRD_TYPE}
        assert set(crds) == typed
        for crd in crds.values():
            assert crd.resource_id in (None, "")  # as the state holds it: no import
            assert crd.inputs["metadata"]["name"] == crd.name.partition(":")[2]
        spoke = spokes["spoke-a"]
        # Not among the objects a wave gate digests; the owner guard waits for them.
        assert not any(r in spoke.registered for r in spoke._crds_first[2:])
        assert len(spoke._crds_first) == 4
        assert EXPORTED[HELD_OUTPUT] is False

    return ready.apply(check)
