"""The registrar under Pulumi mocks: which resources a plan's spokes and waves get, with
which options. (The planner's decisions are tested without Pulumi in tests/unit/fleet;
end-to-end behaviour is proven on the lab.)"""

from __future__ import annotations

import contextlib

import pulumi
import pytest

from access import Reason
from components import fleet as fleet_mod
from components import waves as waves_mod
from config.fleet import parse_fleet_config
from fleet import plan_fleet
from knative import plan as planning
from knative.secret_reads import READS
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile, two_spoke_fleet

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
    return two_spoke_fleet()


@pulumi.runtime.test
def test_one_component_per_spoke_with_anchor_owned_objects(fleet_cfg):
    REGISTERED.clear()
    pulumi.runtime.set_mocks(Mocks(), preview=False)

    spokes = fleet_mod.register_fleet(plan_fleet(fleet_cfg, FakeInventory()))

    def check(_):
        types = [t for t, *_ in REGISTERED]
        assert types.count("knative-fleet:index:Spoke") == 2
        assert types.count("pulumi:providers:kubernetes") == 2
        names = [n for _, n, *_ in REGISTERED]
        assert "spoke-a:knative-serving/knativeserving-knative-serving-root-owner" in names
        assert "spoke-a:knative-eventing/knativeeventing-knative-eventing-root-owner" in names
        assert not any(n.startswith("spoke-b:knative-eventing/") for n in names)
        # The identity's Secret reads: the install's own, owned by no anchor (they outlive
        # every Secret on uninstall).
        assert f"spoke-a:knative-serving/{READS}" in names  # its Role and RoleBinding
        for typ, name, inputs, _ in REGISTERED:
            meta = inputs.get("metadata") or {}
            if typ.startswith("kubernetes:") and meta.get("namespace") and \
                    not name.endswith(("-root-owner", f"/{READS}")):
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


# --- register_waves: which spokes a run registers, wave by wave -------------------------

TWO_WAVES = {"waves": [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
                       {"name": "main"}]}
PROFILES = [profile("s1", ring="canary"), profile("s2", ring="canary"),
            profile("s3", ring="main")]


def _plan(rollout: dict | None, down: set[str]):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": n, "clusterProfileRef": {"name": n, "namespace": "f"}}
                  for n in ("s1", "s2", "s3")],
        **({"rollout": rollout} if rollout else {})})
    inventory = FakeInventory(PROFILES, broken={n: Reason.REMOTE_CLIENT_CREATION_FAILED
                                                for n in down})
    return plan_fleet(cfg, inventory)


@pytest.mark.parametrize(("rollout", "down", "registered", "gates"), [
    # No rollout: an unreachable spoke never holds the others back; no gate.
    (None, {"s1"}, {"s2", "s3"}, 0),
    # Within maxFailures (0): every wave runs, a gate each.
    (TWO_WAVES, set(), {"s1", "s2", "s3"}, 2),
    # Too many unreachable in the canary: its reachable spoke is updated, main is not started.
    (TWO_WAVES, {"s1"}, {"s2"}, 1),
    ({"waves": [{**TWO_WAVES["waves"][0], "maxFailures": 1}, {"name": "main"}]}, {"s1"},
     {"s2", "s3"}, 2),
])
@pulumi.runtime.test
def test_waves_register_what_they_may(rollout, down, registered, gates):
    pulumi.runtime.set_mocks(Mocks(), preview=False)
    plan = _plan(rollout, down)
    reg = waves_mod.register_waves(plan, [])
    assert set(reg.spokes) == registered
    assert sum(len(g) for g in reg.gates.values()) == gates
    with pytest.raises(pulumi.RunError) if down else contextlib.nullcontext():
        fleet_mod.register_fleet(plan)


@pulumi.runtime.test
def test_the_guard_not_the_provider_deletes_aggregated_roles(fleet_cfg, monkeypatch):
    """A provider delete of an aggregated ClusterRole would wait out its timeout on a
    role a stale aggregation controller wrote again; the guard deletes it instead."""
    from components import spoke as spoke_mod

    retained: dict[str, bool] = {}
    real = spoke_mod.ReleaseObject

    def recording(typ, name, props, opts):
        if props["kind"] == "ClusterRole":
            retained[name] = bool(opts.retain_on_delete)
        return real(typ, name, props, opts)

    REGISTERED.clear()
    pulumi.runtime.set_mocks(Mocks(), preview=False)
    monkeypatch.setattr(spoke_mod, "ReleaseObject", recording)
    spokes = fleet_mod.register_fleet(plan_fleet(fleet_cfg, FakeInventory()))

    def check(_):
        guarded = {n.removeprefix("spoke-a:") for t, n, *_ in REGISTERED
                   if t.endswith("AggregatedRoleGuard") and n.startswith("spoke-a:")}
        assert {"knative-serving-admin", "addressable-resolver"} <= guarded
        ours = {n.removeprefix("spoke-a:"): kept for n, kept in retained.items()
                if n.startswith("spoke-a:")}
        assert {role for role, kept in ours.items() if kept} == guarded
        # Every other ClusterRole is held by its component's cluster-RBAC step, which
        # deletes it on destroy (fleet.held_rbac): none is typed.
        assert set(ours) == guarded
        held = {o.removeprefix("ClusterRole/") for t, n, inputs, _ in REGISTERED
                if t.endswith(":ClusterRbac") and n.startswith("spoke-a:")
                for o in inputs["objects"] if o.startswith("ClusterRole/")}
        assert held and not held & guarded

    return pulumi.Output.all(*[s.ready for s in spokes.values()]).apply(check)


@pulumi.runtime.test
def test_the_component_takes_the_failure_and_the_outputs_instead():
    """The package's Fleet: the reachable spokes registered under it, every output handed
    to it, and the run's failure handed to it rather than raised (it fails its construct
    once the registrations are answered: components.fleet_component)."""
    pulumi.runtime.set_mocks(Mocks(), preview=False)
    REGISTERED.clear()
    parent = pulumi.ComponentResource("knative-fleet:index:Fleet", "knative")
    outputs: dict[str, object] = {}
    failures: list[str] = []
    spokes = fleet_mod.register_fleet(_plan(TWO_WAVES, {"s1"}), export=outputs.__setitem__,
                                      parent=parent, fail=failures.append)
    assert set(spokes) == {"s2"}
    assert failures and "s1" in failures[0]
    assert {"ring", "spokes", "waves", "approvals"} <= set(outputs)

    def under_the_component(urns: list[str]) -> None:
        assert all("knative-fleet:index:Fleet$knative-fleet:index:Spoke::" in u
                   for u in urns), urns

    return pulumi.Output.all(*(s.urn for s in spokes.values())).apply(under_the_component)
