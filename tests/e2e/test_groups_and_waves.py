"""Groups and waves end to end on a lab of four spokes, real engine (Serving only: all
the waves need, at half the objects): one group selects every spoke by label, two waves
(the canary, then the rest) install everything; a change that can never become healthy
stops after the canary and leaves the main ring exactly as it was; reverting converges;
a wave that needs approval gates its own changes only: a change outside it is
previewed, reviewed and applied without approval, a change inside it is reviewed as
waiting, stops before it with its spokes untouched, and the approved `up` held to that
review completes;
a relabelled spoke fails the run and keeps its objects; with `whenDeselected: Uninstall`
it is uninstalled without leaks; a new matching ClusterProfile is installed by the next
`pulumi up`.

The tests share one stack and run in file order."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack
from lab.handle import Lab, ensure_lab
from lab.paths import REPO
from lab.register import GROUP, PLURAL, PROFILE_NAMESPACE, VERSION
from tests.support.fleet import changed_spokes, deployments_available, recorded_inputs
from tests.support.snapshot import kept_by_policy, managed_versions, snapshot
from tests.support.topology import lab_with, relabel

pytestmark = pytest.mark.e2e
RINGS = {"spoke-1": "canary", "spoke-2": "main", "spoke-3": "main", "spoke-4": "main"}
WAVE_TIMEOUT_S = 30
BROKEN_SELECTOR = {"knative-fleet.test/no-such-node": "true"}
ONE_KEY = {"autoscaler": {"enable-scale-to-zero": "false"}}


def group(serving: dict | None = None, **extra: object) -> dict:
    return {"name": "lab", "namespace": PROFILE_NAMESPACE,
            "selector": {"matchLabels": {"env": "lab"},
                         "matchExpressions": [{"key": "ring", "operator": "In",
                                               "values": ["canary", "main"]}]},
            "serving": serving or {"version": "1.23"}, **extra}




def rollout(canary_timeout: str = "5m") -> dict:
    """The canary, then the rest; the canary's timeout is short only where a test waits
    for it to run out, so a busy machine never fails a healthy install."""
    return {"waves": [
        {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}},
         "timeout": canary_timeout},
        {"name": "main", "timeout": "5m"},
    ]}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The session's lab grown to four labelled spokes for this module, shrunk back after."""
    lab_with(4, tmp_path_factory)
    lab4 = ensure_lab()
    stack = FleetStack(lab4, f"t-waves-{uuid.uuid4().hex[:6]}",
                       tmp_path_factory.mktemp("state"))
    apis = {s.name: s.api() for s in lab4.spokes}
    before = {name: snapshot(api) for name, api in apis.items()}
    try:
        for name, ring in RINGS.items():
            relabel(lab4, name, {"env": "lab", "ring": ring})
        stack.init()
        yield {"lab": lab4, "stack": stack, "apis": apis, "before": before}
    finally:
        res = stack.destroy()
        stack.remove()
        stack.cleanup()
        leaked = {n: leftovers(api, before[n]) for n, api in apis.items()}
        for name in RINGS:
            relabel(lab4, name, {"env": None, "ring": None})
        lab_with(len(lab.spokes), tmp_path_factory)
        assert res.ok, res.why
        assert not any(leaked.values()), leaked


def leftovers(api: client.ApiClient, before: set) -> list:
    """What an uninstall left on the spoke beyond what it keeps on purpose (the CRDs)."""
    after = snapshot(api)
    return sorted(after - before - kept_by_policy(after))


def configure(world: dict, serving: dict | None = None, canary_timeout: str = "5m",
              **group_extra: object) -> None:
    world["stack"].configure([], groups=[group(serving, **group_extra)],
                             rollout=rollout(canary_timeout))


def healthy(api: client.ApiClient) -> bool:
    states = deployments_available(api, "knative-serving")
    return bool(states) and all(states.values())


def test_one_group_two_waves_installs_every_spoke(world: dict) -> None:
    configure(world)
    res = world["stack"].up()
    assert res.ok, res.why
    out = world["stack"].outputs()
    assert {n: w["status"] for n, w in out["waves"].items()} == {
        "canary": "Completed", "main": "Completed"}
    assert out["waves"]["canary"]["spokes"] == ["spoke-1"]
    assert out["waves"]["main"]["spokes"] == ["spoke-2", "spoke-3", "spoke-4"]
    for name in RINGS:
        spoke = out["spokes"][name]
        assert (spoke["group"], spoke["wave"], spoke["ready"]) == ("lab", RINGS[name], True)
        assert (spoke["serving"], spoke.get("eventing")) == ("1.23.0", None)
        assert healthy(world["apis"][name]), name


def test_a_change_that_never_gets_healthy_stops_after_the_canary(world: dict) -> None:
    main = [n for n, ring in RINGS.items() if ring == "main"]
    before = {n: managed_versions(world["apis"][n]) for n in main}
    held = recorded_inputs(world["stack"].export(), main)
    configure(world, {"version": "1.23", "workloads": [
        {"name": "controller", "nodeSelector": BROKEN_SELECTOR}]},
        canary_timeout=f"{WAVE_TIMEOUT_S}s")
    _, doc = world["stack"].preview_document()
    assert "spoke-1" in changed_spokes(doc["steps"])
    # The preview names each spoke's wave (the review report reads it there).
    waves = {d.get("urn", "").rsplit("::", 1)[-1]: d["message"].strip()
             for d in doc.get("diagnostics") or [] if "of the rollout" in d["message"]}
    assert waves["spoke-1"] == "wave 'canary' (1 of the rollout)", waves
    assert waves["spoke-4"] == "wave 'main' (2 of the rollout)", waves
    res = world["stack"].up()
    assert not res.ok, res.out
    assert "wave 'canary' is not healthy" in res.out, res.out
    assert "spoke 'spoke-1': Deployment knative-serving/controller" in res.out, res.out
    assert "Later waves were not started (main)" in res.out, res.out
    # The canary runs the change; the main ring is exactly as it was.
    controller = client.AppsV1Api(world["apis"]["spoke-1"]).read_namespaced_deployment(
        "controller", "knative-serving")
    assert controller.spec.template.spec.node_selector == BROKEN_SELECTOR
    # ... while its old pods keep serving: the Deployment stays Available on them.
    assert (controller.status.available_replicas or 0) >= 1, controller.status
    assert any(c.type == "Available" and c.status == "True"
               for c in controller.status.conditions or []), controller.status.conditions
    assert {n: managed_versions(world["apis"][n]) for n in main} == before
    assert recorded_inputs(world["stack"].export(), main) == held


def test_reverting_the_change_converges_every_spoke(world: dict) -> None:
    configure(world)
    res = world["stack"].up()
    assert res.ok, res.why
    for name, api in world["apis"].items():
        assert healthy(api), name
    controller = client.AppsV1Api(world["apis"]["spoke-1"]).read_namespaced_deployment(
        "controller", "knative-serving")
    assert not controller.spec.template.spec.node_selector
    _, steps = world["stack"].preview_steps()
    assert changed_spokes(steps) == {}


@contextmanager
def unreachable(lab: Lab, name: str) -> Iterator[None]:
    """ClusterProfile `name` names an address where nothing listens, as it was after."""
    api = client.CustomObjectsApi(lab.hub.api())
    obj = api.get_namespaced_custom_object(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name)
    original = json.loads(json.dumps(obj["status"]))
    obj["status"]["accessProviders"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    api.replace_namespaced_custom_object_status(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL,
                                                name, obj)
    try:
        yield
    finally:
        obj = api.get_namespaced_custom_object(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name)
        obj["status"] = original
        api.replace_namespaced_custom_object_status(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL,
                                                    name, obj)


def test_an_unreachable_canary_counts_as_a_failure_and_no_later_wave_is_touched(
        world: dict) -> None:
    """README 'Waves': an unreachable spoke counts as a failure of its wave. A change for
    every spoke while the canary cannot be reached: the run fails naming it, and the main
    ring's objects, in the clusters and in the state, stay as they were."""
    stack: FleetStack = world["stack"]
    apis = world["apis"]
    before = {n: managed_versions(api) for n, api in apis.items()}
    main = [n for n, ring in RINGS.items() if ring == "main"]
    held = recorded_inputs(stack.export(), main)
    configure(world, {"version": "1.23", "config": ONE_KEY})
    try:
        with unreachable(world["lab"], "spoke-1"):
            res = stack.up()
        assert not res.ok, res.out
        assert "spoke 'spoke-1': RemoteClientCreationFailed" in res.out, res.out
        assert "wave 'canary' stopped the rollout: 1 of its spokes are unreachable" \
            in res.out, res.out
        assert "the other spokes of the waves that ran (canary) were updated" in res.out
        assert "Later waves were not started (main; spokes: spoke-2, spoke-3, spoke-4)" \
            in res.out, res.out
        assert {n: managed_versions(apis[n]) for n in RINGS} == before
        assert recorded_inputs(stack.export(), main) == held
    finally:
        configure(world)


APPROVAL_WAVES = {"waves": [
    *rollout()["waves"][:1],
    {"name": "early", "timeout": "5m", "selector": {"matchLabels": {"approval-test": "early"}}},
    {"name": "main", "timeout": "5m", "approval": "Required"}]}


def review(world: dict, out: Path) -> tuple[int, dict, str]:
    """`python -m review` of the stack, without any approval: (exit, report.json, md)."""
    proc = subprocess.run(
        [sys.executable, "-m", "review", "--stack", world["stack"].stack, "--out", str(out)],
        cwd=REPO, env={k: v for k, v in world["stack"].env.items()
                       if k != "KNATIVE_FLEET_APPROVE"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)
    return (proc.returncode, json.loads((out / "report.json").read_text()),
            (out / "report.md").read_text())


def approvals(report: dict) -> list[dict]:
    return [p for p in report["needsHuman"] if p["category"] == "approvals"]


def up_as(world: dict, approve: str | None = None, reviewed: Path | None = None):
    """`pulumi up`, approved for `approve`, held to the review `reviewed` as `make apply
    REVIEWED=...` holds it (KNATIVE_FLEET_REVIEWED)."""
    stack = world["stack"]
    extra = {"KNATIVE_FLEET_APPROVE": approve or "",
             "KNATIVE_FLEET_REVIEWED": str(reviewed) if reviewed else ""}
    saved = dict(stack.env)
    stack.env.update(extra)
    try:
        return stack.up()
    finally:
        stack.env.clear()
        stack.env.update(saved)


def test_a_wave_that_needs_approval_gates_its_changes_not_the_stack(
        world: dict, tmp_path: Path) -> None:
    """Three waves, the last one `approval: Required`. Once the wave's state is recorded
    (the first, approved run), a change outside it is previewed, reviewed and applied
    without any approval; a change inside it is previewed and reviewed as waiting, its
    `up` without approval applies the waves before it and stops with the wave's spokes
    untouched (nothing deleted), and the approved `up` of that review, held to it,
    applies exactly what it showed."""
    stack, apis = world["stack"], world["apis"]
    relabel(world["lab"], "spoke-2", {"approval-test": "early"})
    waiting = ("spoke-3", "spoke-4")
    try:
        stack.configure([], groups=[group()], rollout=APPROVAL_WAVES)
        res = up_as(world, approve="main")
        assert res.ok, res.why
        approved = stack.outputs()["approvals"]["main"]
        assert approved.startswith("sha256:"), approved
        # A change outside the waiting wave: the canary's own entry.
        canary = {"name": "spoke-1", "clusterProfileRef": {"name": "spoke-1",
                                                           "namespace": PROFILE_NAMESPACE},
                  "serving": {"version": "1.23", "config": ONE_KEY}}
        stack.configure([canary], groups=[group()], rollout=APPROVAL_WAVES)
        assert stack.preview().ok
        code, report, _ = review(world, tmp_path / "outside")
        assert code == 0 and not approvals(report), report["needsHuman"]
        assert [s["name"] for s in report["spokes"]] == ["spoke-1"], report["spokes"]
        res = up_as(world)
        assert res.ok, res.why
        assert scale_to_zero(apis["spoke-1"]) == "false"

        # A change inside it: previewed and reviewed as waiting for approval.
        stack.configure([], groups=[group({"version": "1.23", "config": ONE_KEY})],
                        rollout=APPROVAL_WAVES)
        preview = stack.preview()
        assert preview.ok, preview.why
        code, report, text = review(world, tmp_path / "inside")
        assert code == 0, text
        [waits] = approvals(report)
        assert waits["objects"] == list(waiting), waits
        assert "wave 'main' changes 2 spoke(s)" in waits["text"], waits
        assert "Waits for approval" in text and "KNATIVE_FLEET_APPROVE=main" in text, text
        assert {s["name"] for s in report["spokes"]} == {"spoke-2", *waiting}
        reviewed = tmp_path / "inside" / "report.json"

        before = {n: managed_versions(apis[n]) for n in waiting}
        res = up_as(world, reviewed=reviewed)
        assert not res.ok, res.out
        assert "wave 'main' waits for approval: its spokes (spoke-3, spoke-4) change" \
            in res.out, res.out
        assert "KNATIVE_FLEET_APPROVE=main" in res.out, res.out
        assert {n: scale_to_zero(apis[n]) for n in RINGS} == {
            "spoke-1": "false", "spoke-2": "false", "spoke-3": None, "spoke-4": None}
        assert {n: managed_versions(apis[n]) for n in waiting} == before
        # The stopped run recorded what waits: `pulumi stack output` names the wave, its
        # spokes as they run, and the digest its gate still holds.
        out = stack.outputs()
        assert {n: w["status"] for n, w in out["waves"].items()} == {
            "canary": "Completed", "early": "Completed", "main": "WaitingForApproval"}, out
        assert out["approvals"] == {"main": approved}, out["approvals"]
        assert {n: out["spokes"][n]["ready"] for n in waiting} == {
            n: True for n in waiting}, out["spokes"]
        assert stack.history()[0]["result"] == "failed"

        # The approved `up` of that review plans what the review showed, and lands.
        res = up_as(world, approve="main", reviewed=reviewed)
        assert res.ok, res.why
        assert "the reviewed plan (sha256:" in res.out, res.out
        out = stack.outputs()
        assert {n: w["status"] for n, w in out["waves"].items()} == {
            "canary": "Completed", "early": "Completed", "main": "Completed"}
        assert out["approvals"]["main"] not in ("", approved), out["approvals"]
        assert {scale_to_zero(apis[n]) for n in RINGS} == {"false"}
        _, steps = stack.preview_steps()
        assert changed_spokes(steps) == {}
    finally:
        relabel(world["lab"], "spoke-2", {"approval-test": None})
        configure(world)
        up_as(world, approve="main")


MEMBER_ID = "multicluster.x-k8s.io/inventory-member-id"


def test_every_selection_error_stops_the_run_before_anything_changes(world: dict) -> None:
    """README 'Groups and waves': a ClusterProfile two groups select, one cluster twice
    (the same inventory-member-id), a spoke no wave takes. Each `up` carries a change for
    every spoke, fails naming its config path and the fix, and changes nothing: not a
    spoke's objects, not the state."""
    stack: FleetStack = world["stack"]
    apis = world["apis"]
    before = {name: managed_versions(api) for name, api in apis.items()}
    held = recorded_inputs(stack.export())
    second = {"name": "lab-canary", "namespace": PROFILE_NAMESPACE,
              "selector": {"matchLabels": {"ring": "canary"}},
              "serving": {"version": "1.23", "config": ONE_KEY}}
    only_canary = {"waves": [{"name": "canary",
                              "selector": {"matchLabels": {"ring": "canary"}}}]}
    cases = {
        "two groups": ({"groups": [group({"version": "1.23", "config": ONE_KEY}), second]},
                       "both select ClusterProfile fleet-system/spoke-1", None),
        "one cluster twice": ({}, f"carry the same {MEMBER_ID}='lab-cluster-2'",
                              {"spoke-2": "lab-cluster-2", "spoke-3": "lab-cluster-2"}),
        "no wave": ({"rollout": only_canary}, "rollout.waves: no wave takes spoke(s) spoke-2",
                    None),
    }
    try:
        for case, (config, needle, members) in cases.items():
            settings = {"groups": [group({"version": "1.23", "config": ONE_KEY})],
                        "rollout": rollout(), **config}
            stack.configure([], **settings)
            for name, member in (members or {}).items():
                relabel(world["lab"], name, {MEMBER_ID: member})
            try:
                res = stack.up()
            finally:
                for name in members or {}:
                    relabel(world["lab"], name, {MEMBER_ID: None})
            assert not res.ok, (case, res.out)
            assert needle in res.out, (case, res.out)
            assert "Nothing was changed" in res.out and "Traceback" not in res.out, res.out
            assert {name: managed_versions(api) for name, api in apis.items()} == before, case
            assert recorded_inputs(stack.export()) == held, case
    finally:
        configure(world)


def scale_to_zero(api: client.ApiClient) -> str | None:
    data = client.CoreV1Api(api).read_namespaced_config_map(
        "config-autoscaler", "knative-serving").data or {}
    return data.get("enable-scale-to-zero")


def test_a_relabelled_spoke_fails_the_run_and_keeps_its_objects(world: dict) -> None:
    before = managed_versions(world["apis"]["spoke-4"])
    relabel(world["lab"], "spoke-4", {"env": "staging"})
    for res in (world["stack"].preview(), world["stack"].up()):
        assert not res.ok, res.out
        assert "spoke 'spoke-4': SpokeDeselected: group 'lab'" in res.out, res.out
        assert "ClusterProfile fleet-system/spoke-4" in res.out, res.out
        assert "env=staging" in res.out, res.out
    assert managed_versions(world["apis"]["spoke-4"]) == before
    assert "spoke-4" in world["stack"].outputs()["spokes"]


def test_with_uninstall_a_deselected_spoke_is_uninstalled_without_leaks(world: dict) -> None:
    configure(world, whenDeselected="Uninstall")
    _, steps = world["stack"].preview_steps()
    changed = changed_spokes(steps)
    assert changed.get("spoke-4") == {"delete"}, changed
    res = world["stack"].up()
    assert res.ok, res.why
    assert leftovers(world["apis"]["spoke-4"], world["before"]["spoke-4"]) == []
    assert "spoke-4" not in world["stack"].outputs()["spokes"]


def test_a_newly_matching_cluster_profile_is_installed_by_the_next_up(world: dict) -> None:
    relabel(world["lab"], "spoke-4", {"env": "lab"})
    _, steps = world["stack"].preview_steps()
    assert changed_spokes(steps).get("spoke-4") == {"create"}
    res = world["stack"].up()
    assert res.ok, res.why
    spoke = world["stack"].outputs()["spokes"]["spoke-4"]
    assert (spoke["wave"], spoke["ready"]) == ("main", True)
    assert healthy(world["apis"]["spoke-4"])
