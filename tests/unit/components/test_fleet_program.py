"""The program's own wiring: how one entry is resolved and planned, and under Pulumi
mocks which resources one spoke gets, with which options. (End-to-end behaviour is
proven on the lab, not here.)"""

from __future__ import annotations

import contextlib

import pulumi
import pytest

from access import PluginCredential, Reason, ResolutionError, ResolvedSpoke, SpokeFacts
from components import fleet as fleet_mod
from components import waves as waves_mod
from config.fleet import parse_fleet_config
from core.errors import ReleaseError, TransformError
from knative import plan as planning
from lab.paths import RELEASES
from tests.support.factories import resolved_and_planned, spoke_connection

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

    monkeypatch.setattr(fleet_mod, "resolve_fleet", resolved_and_planned)
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


# --- resolve_entry: one entry through access.resolve_spoke, then the plan ---------------------


def resolved(facts: SpokeFacts | None = None) -> ResolvedSpoke:
    return ResolvedSpoke(spoke_connection(), PluginCredential(token="t"), "v1.36.3",
                         facts or SpokeFacts(namespaces={}, installed={}))


def test_entry_is_resolved_with_the_install_namespaces_then_planned(fleet_cfg, monkeypatch):
    calls: list[tuple[tuple, dict]] = []
    planned: list[tuple] = []
    facts = SpokeFacts(namespaces={"knative-serving": {}}, installed={"knative-serving": "1.22.0"})

    def fake_resolve(*args, **kwargs):
        calls.append((args, kwargs))
        return resolved(facts)

    def fake_plan(*args, **kwargs):
        planned.append(args + tuple(kwargs.values()))
        return ["plan"]

    monkeypatch.setattr(fleet_mod, "resolve_spoke", fake_resolve)
    monkeypatch.setattr(planning, "plan_spoke", fake_plan)
    entry = fleet_cfg.fleet[0]
    result = fleet_mod.resolve_entry(entry, fleet_cfg, "hub", None, "providers")
    assert result.error is None
    assert (result.connection, result.server_version, result.plans) == (
        spoke_connection(), "v1.36.3", ["plan"])
    (args, kwargs), = calls
    assert args == ("spoke-a", "f", "a")
    assert kwargs == {"hub": "hub", "hub_error": None, "providers": "providers",
                      "namespaces": ("knative-serving", "knative-eventing"),
                      "plugin_timeout": fleet_cfg.plugin_timeout_seconds}
    assert facts.namespaces in planned[0] and facts.installed in planned[0]


def test_a_spoke_that_does_not_resolve_is_not_planned(fleet_cfg, monkeypatch):
    error = ResolutionError("spoke-a", Reason.ACCESS_PROVIDER_FAILED, "plugin failed")

    def fake_resolve(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(fleet_mod, "resolve_spoke", fake_resolve)
    monkeypatch.setattr(planning, "plan_spoke", lambda *a, **k: pytest.fail("planned"))
    result = fleet_mod.resolve_entry(fleet_cfg.fleet[0], fleet_cfg, None, None, None)
    assert (result.error, result.connection, result.plans) == (error, None, [])


@pytest.mark.parametrize(("exc", "reason"), [
    (ReleaseError("no release 1.23"), Reason.MANIFESTS_UNAVAILABLE),
    (TransformError("bad spec"), Reason.INVALID_SPEC),
])
def test_planning_errors_keep_their_reasons(fleet_cfg, monkeypatch, exc, reason):
    def fail(*_args, **_kwargs):
        raise exc

    monkeypatch.setattr(fleet_mod, "resolve_spoke", lambda *a, **k: resolved())
    monkeypatch.setattr(planning, "plan_spoke", fail)
    result = fleet_mod.resolve_entry(fleet_cfg.fleet[0], fleet_cfg, None, None, None)
    assert result.error is not None and result.connection is None
    assert (result.error.spoke, result.error.reason, result.error.message) == (
        "spoke-a", reason, str(exc))


def test_without_a_provider_file_the_real_path_says_so(fleet_cfg):
    result = fleet_mod.resolve_entry(fleet_cfg.fleet[1], fleet_cfg, None, OSError("x"), None)
    assert result.error is not None
    assert (result.error.spoke, result.error.reason, result.error.message) == (
        "spoke-b", Reason.MULTICLUSTER_DISABLED,
        "no access-provider file is configured (knative-fleet:providerFile)")


# --- run_waves: which spokes a run registers, wave by wave -------------------------------


def _selected(name: str, ring: str):
    from targeting.selection import SelectedSpoke
    entry = parse_fleet_config({"fleet": [
        {"name": name, "clusterProfileRef": {"name": name, "namespace": "f"}}]}).fleet[0]
    return SelectedSpoke(entry, None, {"ring": ring})


def _waves_and_results(rollout: dict | None, down: set[str]):
    from rollout.waves import assign_waves
    cfg = parse_fleet_config({"fleet": [], **({"rollout": rollout} if rollout else {})})
    selected = [_selected("s1", "canary"), _selected("s2", "canary"),
                _selected("s3", "main")]
    results = {}
    for s in selected:
        if s.entry.name in down:
            err = ResolutionError(s.entry.name, Reason.REMOTE_CLIENT_CREATION_FAILED, "down")
            results[s.entry.name] = fleet_mod.SpokeResult(entry=s.entry, error=err)
        else:
            results[s.entry.name] = fleet_mod.SpokeResult(
                entry=s.entry, connection=spoke_connection(), server_version="v1", plans=[])
    return cfg, assign_waves(cfg, selected), results


TWO_WAVES = {"waves": [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
                       {"name": "main"}]}


@pytest.mark.parametrize(("rollout", "down", "registered", "started"), [
    # No rollout: an unreachable spoke never holds the others back.
    (None, {"s1"}, {"s2", "s3"}, [True]),
    # Within maxFailures (0): every wave runs.
    (TWO_WAVES, set(), {"s1", "s2", "s3"}, [True, True]),
    # Too many unreachable in the canary: its reachable spoke is updated, main is not started.
    (TWO_WAVES, {"s1"}, {"s2"}, [True, False]),
    ({"waves": [{**TWO_WAVES["waves"][0], "maxFailures": 1}, {"name": "main"}]}, {"s1"},
     {"s2", "s3"}, [True, True]),
])
@pulumi.runtime.test
def test_waves_register_what_they_may(rollout, down, registered, started):
    pulumi.runtime.set_mocks(Mocks(), preview=False)
    cfg, waves, results = _waves_and_results(rollout, down)
    runs = waves_mod.run_waves(cfg, waves, results, [])
    assert {n for r in runs for n in r.spokes} == registered
    assert [r.started for r in runs] == started
    gates = [g for r in runs for g in r.gates]
    assert len(gates) == (0 if rollout is None else sum(1 for r in runs if r.spokes))
    with pytest.raises(pulumi.RunError) if down else contextlib.nullcontext():
        fleet_mod._fail_if_incomplete(results, runs)



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
    monkeypatch.setattr(fleet_mod, "resolve_fleet", resolved_and_planned)
    monkeypatch.setattr(spoke_mod, "ReleaseObject", recording)
    spokes = fleet_mod.deploy(fleet_cfg)

    def check(_):
        guarded = {n.removeprefix("spoke-a:") for t, n, *_ in REGISTERED
                   if t.endswith("AggregatedRoleGuard") and n.startswith("spoke-a:")}
        assert {"knative-serving-admin", "addressable-resolver"} <= guarded
        ours = {n.removeprefix("spoke-a:"): kept for n, kept in retained.items()
                if n.startswith("spoke-a:")}
        assert {role for role, kept in ours.items() if kept} == guarded
        assert len(ours) > len(guarded)

    return pulumi.Output.all(*[s.ready for s in spokes.values()]).apply(check)
