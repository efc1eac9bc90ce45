"""The anchor's uid as the owner of the install's objects, in a preview that creates the
anchor: its id is unknown there and its raw `metadata` output is the input, without a
uid, so the owner reference must stay unknown rather than fail or carry no uid."""

from __future__ import annotations

import pulumi

from components import fleet as fleet_mod
from config.fleet import parse_fleet_config
from fleet import plan_fleet
from lab.paths import RELEASES
from tests.support.factories import FakeInventory

ANCHOR = "spoke-a:knative-serving/knativeserving-knative-serving-root-owner"
OWNED = "spoke-a:knative-serving/activator"
SEEN: dict[str, dict] = {}


class PreviewOfANewSpoke(pulumi.runtime.Mocks):
    """A preview's creates: no id, outputs are the inputs (no uid in the anchor's metadata)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        SEEN[args.name] = args.inputs
        return "", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def test_owned_objects_wait_for_an_anchor_that_a_preview_creates():
    SEEN.clear()
    pulumi.runtime.set_mocks(PreviewOfANewSpoke(), preview=True)
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": "spoke-a", "clusterProfileRef": {"name": "a", "namespace": "f"},
                   "serving": {"version": "1.23"}}],
    })

    @pulumi.runtime.test
    def program():
        fleet_mod.register_fleet(plan_fleet(cfg, FakeInventory()))

    program()  # returns once every registration is done
    assert "uid" not in SEEN[ANCHOR]["metadata"]
    refs = SEEN[OWNED]["metadata"].get("ownerReferences")
    # unknown in a preview: no reference that names a uid of None reaches the engine
    assert not any(isinstance(r, dict) and r.get("uid") is None for r in refs or []), refs
