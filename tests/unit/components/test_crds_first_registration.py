"""Each component's CRDs applied first, under Pulumi mocks: the step is registered after
the namespace with the CRDs it applies, the typed CRDs wait for it, and an `up` (never a
preview) gives them the import id the engine imports by when the stack has none."""

from __future__ import annotations

import pulumi
import pytest

from components import fleet as fleet_mod
from core.resource_types import CRDS_FIRST
from fleet import crds_first, plan_fleet
from tests.support.factories import FakeInventory, two_spoke_fleet

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
SEEN: list[pulumi.runtime.MockResourceArgs] = []


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        SEEN.append(args)
        return args.resource_id or f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def _register(preview: bool) -> tuple[pulumi.Output, dict]:
    SEEN.clear()
    pulumi.runtime.set_mocks(Mocks(), preview=preview)
    spokes = fleet_mod.register_fleet(plan_fleet(two_spoke_fleet(), FakeInventory()))
    return pulumi.Output.all(*[s.ready for s in spokes.values()]), spokes


@pytest.mark.parametrize("preview", [False, True], ids=["up", "preview"])
@pulumi.runtime.test
def test_the_crds_come_after_their_step_and_are_imported_only_by_an_up(preview):
    ready, spokes = _register(preview)

    def check(_):
        steps = {a.name: a for a in SEEN if a.typ == CRDS_FIRST.type}
        assert set(steps) == {"spoke-a:knative-serving/crds-first",
                              "spoke-a:knative-eventing/crds-first",
                              "spoke-b:knative-serving/crds-first"}
        crds = [a for a in SEEN if a.typ == CRD_TYPE]
        assert crds
        for crd in crds:
            name = crd.inputs["metadata"]["name"]
            assert (crd.resource_id or None) == (None if preview else name), crd.name
        step = steps["spoke-a:knative-serving/crds-first"]
        serving = sorted(a.inputs["metadata"]["name"] for a in crds
                         if a.name.startswith("spoke-a:")
                         and a.inputs["spec"]["group"].endswith("serving.knative.dev"))
        assert serving and set(serving) <= set(step.inputs["crds"])
        bodies = crds_first.decode(step.inputs["manifest"])
        assert [b["metadata"]["name"] for b in bodies] == step.inputs["crds"]
        assert step.inputs["spoke"] == "spoke-a"
        # The typed CRDs depend on the step, and the owner guard on everything.
        spoke = spokes["spoke-a"]
        assert len(spoke._crds_first) == 2

    return ready.apply(check)
