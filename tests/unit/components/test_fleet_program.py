"""The program's own wiring under Pulumi mocks: which resources one spoke gets,
with which options. (End-to-end behaviour is proven on the lab, not here.)"""

from __future__ import annotations

import pulumi
import pytest

from components import fleet as fleet_mod
from config.fleet import parse_fleet_config
from knative import plan as planning
from lab.paths import RELEASES
from tests.support.factories import spoke_connection

REGISTERED: list[tuple[str, str, dict, pulumi.ResourceOptions | None]] = []


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        REGISTERED.append((args.typ, args.name, args.inputs, None))
        outputs = dict(args.inputs)
        if args.typ == "kubernetes:core/v1:ConfigMap":
            outputs["metadata"] = {**args.inputs.get("metadata", {}), "uid": f"uid-{args.name}"}
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


@pytest.fixture()
def fleet_cfg():
    return parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [
            {"name": "spoke-a", "clusterProfileRef": {"name": "a", "namespace": "f"},
             "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}},
            {"name": "spoke-b", "clusterProfileRef": {"name": "b", "namespace": "f"},
             "serving": {"version": "1.22"}},
        ],
    })


@pulumi.runtime.test
def test_one_component_per_spoke_with_anchor_owned_objects(fleet_cfg, monkeypatch):
    REGISTERED.clear()
    pulumi.runtime.set_mocks(Mocks(), preview=False)

    def fake_resolve(cfg):
        return [fleet_mod.SpokeResult(
            entry=e, connection=spoke_connection(), server_version="v1.36.3",
            plans=planning.plan_spoke(e, cfg.release_base, {})) for e in cfg.fleet]

    monkeypatch.setattr(fleet_mod, "resolve_fleet", fake_resolve)
    spokes = fleet_mod.deploy(fleet_cfg)

    def check(_):
        types = [t for t, *_ in REGISTERED]
        assert types.count("knative-fleet:index:Spoke") == 2
        assert types.count("pulumi:providers:kubernetes") == 2
        names = [n for _, n, *_ in REGISTERED]
        assert "spoke-a:knative-serving/knativeserving-knative-serving-root-owner" in names
        assert "spoke-a:knative-eventing/knativeeventing-knative-eventing-root-owner" in names
        assert not any(n.startswith("spoke-b:knative-eventing/") for n in names)
        for typ, name, inputs, _ in REGISTERED:
            meta = inputs.get("metadata") or {}
            if typ.startswith("kubernetes:") and meta.get("namespace") and \
                    not name.endswith("-root-owner"):
                refs = meta.get("ownerReferences")
                assert refs and len(refs) == 1, name
                ns = meta["namespace"]
                component = "serving" if ns == "knative-serving" else "eventing"
                expected = planning.KIND[component].lower()
                assert refs[0]["name"].startswith(expected), (name, refs)
        providers = [i for t, _, i, _ in REGISTERED if t == "pulumi:providers:kubernetes"]
        assert {p["clusterIdentifier"] for p in providers} == {
            "clusterprofile/f/a", "clusterprofile/f/b"}
        assert all("token" not in p["kubeconfig"] for p in providers)

    return pulumi.Output.all(*[s.ready for s in spokes.values()]).apply(check)
