"""Approval gates a change, not a stack: a wave with `approval: Required` is planned as
every other, behind an approval gate whose input is the digest of what the wave's
spokes are planned to run; the plan is the same whether or not the run is approved, the
digest moves only when the wave's own spokes change, and the gate's step refuses an
unapproved change with the way to approve it."""

from __future__ import annotations

import dataclasses

import pytest

from config.fleet import parse_fleet_config
from core.errors import ConfigError
from core.settings import settings
from fleet import plan_fleet
from lab.paths import RELEASES
from rollout.approval import gate_name, refusal, wave_digest
from tests.support.factories import FakeInventory, profile

PROFILES = [profile("s1", ring="canary"), profile("s2", ring="early"),
            profile("s3", ring="main"), profile("s4", ring="main")]
WAVES = [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
         {"name": "early", "selector": {"matchLabels": {"ring": "early"}}},
         {"name": "main", "approval": "Required"}]


def plan(waves: list[dict] = WAVES, serving: dict | None = None,
         broken: dict | None = None):
    serving = serving or {}
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"},
                   "serving": serving.get(p["metadata"]["name"], {"version": "1.23"})}
                  for p in PROFILES],
        "rollout": {"waves": waves}})
    return plan_fleet(cfg, FakeInventory(PROFILES, broken=broken))


def test_every_wave_is_planned_and_the_approval_wave_has_its_gate():
    canary, early, main = plan().waves
    assert all(w.started for w in (canary, early, main))
    assert canary.approval is None and early.approval is None
    assert main.approval is not None
    assert main.approval.gate == gate_name("main") == "approval-main"
    assert main.approval.spokes == ("s3", "s4")
    assert [b.spokes for b in main.batches] == [("s3", "s4")]


def test_the_plan_does_not_depend_on_the_approval(monkeypatch: pytest.MonkeyPatch):
    without = plan()
    monkeypatch.setenv("KNATIVE_FLEET_APPROVE", "main")
    assert plan() == without
    assert without.failure is None


def test_the_digest_moves_only_when_the_waves_own_spokes_change():
    base = plan().waves[2].approval.changes
    assert plan().waves[2].approval.changes == base
    canary_changed = plan(serving={"s1": {"version": "1.22"}})
    assert canary_changed.waves[2].approval.changes == base
    main_changed = plan(serving={"s4": {"version": "1.23", "config": {
        "autoscaler": {"enable-scale-to-zero": "false"}}}})
    assert main_changed.waves[2].approval.changes != base


def test_how_the_crds_are_registered_is_not_part_of_the_change():
    """A program that adds the CRDs-first step (fleet.crds_first) to a stack's spokes, and
    registers its CRDs with the fields the API server fills in (knative.crd_defaults),
    asks its waves for no new approval: what runs there is the same."""
    planned = plan()
    main = planned.waves[2]
    installs = {n: planned.spokes[n].install for n in main.approval.spokes}
    without = {n: dataclasses.replace(i, components=tuple(
        dataclasses.replace(c, crds_first=None, stages=tuple(
            dataclasses.replace(s, objects=tuple(
                dataclasses.replace(o, server_defaults=None)
                for o in s.objects))
            for s in c.stages))
        for c in i.components)) for n, i in installs.items()}
    assert any(c.crds_first for i in installs.values() for c in i.components)
    assert any(o.server_defaults for i in installs.values() for c in i.components
               for s in c.stages for o in s.objects)
    assert wave_digest(without) == wave_digest(installs) == main.approval.changes


def test_which_objects_a_step_holds_is_not_part_of_the_change():
    """A program that holds the ClusterRoles and the namespaced objects by their steps
    (fleet.held_rbac, fleet.held_namespaced) asks its waves for no new approval: what
    runs there is the same as when they were typed resources."""
    planned = plan()
    main = planned.waves[2]
    installs = {n: planned.spokes[n].install for n in main.approval.spokes}
    typed = {n: dataclasses.replace(i, components=tuple(
        dataclasses.replace(c, cluster_rbac=None, namespaced_objects=None)
        for c in i.components)) for n, i in installs.items()}
    assert all(c.cluster_rbac and c.namespaced_objects
               for i in installs.values() for c in i.components)
    assert wave_digest(typed) == wave_digest(installs) == main.approval.changes


def test_an_unreachable_spoke_of_the_wave_is_not_part_of_its_change():
    p = plan(broken={"s4": "ClusterProfileNotFound"})
    assert p.waves[2].approval.spokes == ("s3",)
    assert plan(broken={"s3": "ClusterProfileNotFound",
                        "s4": "ClusterProfileNotFound"}).waves[2].approval is None


def test_the_gate_refuses_an_unapproved_change_and_says_how_to_approve():
    props = {"wave": "early", "spokes": ["s2"], "later": ["main"]}
    assert refusal(props, frozenset({"early"})) is None
    assert refusal(props, frozenset({"main", "erly"})) == (
        "wave 'early' waits for approval: its spokes (s2) change, and it and the waves "
        "after it (main) were not started; their objects, in the clusters and in the "
        "state, are as they were. To approve, run again with KNATIVE_FLEET_APPROVE=early "
        "(or python -m runner up --approve early).")


def test_approve_is_a_comma_separated_list_of_wave_names():
    assert settings({"KNATIVE_FLEET_APPROVE": " main, early ,"}).approved_waves == {
        "main", "early"}
    assert settings({}).approved_waves == frozenset()


def test_approval_accepts_only_required_or_none():
    with pytest.raises(ConfigError, match="approval"):
        parse_fleet_config({"rollout": {"waves": [{"name": "a", "approval": "yes"}]}})


def test_the_gates_step_reads_the_approval_of_the_run(monkeypatch: pytest.MonkeyPatch):
    from components.approval_gate import _Provider

    props = {"wave": "main", "changes": "sha256:1", "spokes": ["s3"], "later": []}
    monkeypatch.delenv("KNATIVE_FLEET_APPROVE", raising=False)
    with pytest.raises(RuntimeError, match="wave 'main' waits for approval"):
        _Provider().create(props)
    with pytest.raises(RuntimeError, match="KNATIVE_FLEET_APPROVE=main"):
        _Provider().update("main", props, {**props, "changes": "sha256:2"})
    monkeypatch.setenv("KNATIVE_FLEET_APPROVE", "main")
    assert _Provider().create(props).id == "main"
    assert not _Provider().diff("main", props, {**props, "spokes": ["s3", "s4"]}).changes
    assert _Provider().diff("main", props, {**props, "changes": "sha256:2"}).changes
