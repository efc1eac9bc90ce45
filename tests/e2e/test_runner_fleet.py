"""A fleet bigger than one stack, for real: eight lab spokes in four shard stacks across
two rings, driven by `python -m runner` on the real Pulumi engine.

Each shard is a stack of the product whose group selects its slice of the ClusterProfiles
by label (`shard: <stack>`). The runner installs ring 1, then ring 2; a bad change in one
ring-1 stack stops the rollout there, and ring 2's spokes (their managed objects, compared
before and after) and stacks (their update history) are left untouched; with
`--rollback-on-failure` a ring-1 stack whose change never gets healthy goes back to its
last successful config, every object keeping its uid, and the summary names the spokes
that failed it; a failed 1.22 -> 1.23 upgrade is rolled back keeping 1.23 (no
downgrade) and the same failed config is refused by the next run; a stack that only
waits for a wave's approval ends the run with exit code 3 and is never rolled back; the
fleet view
lists all eight spokes with their versions; `destroy` through the runner leaves nothing
on any spoke but the CRDs it keeps on purpose.

The module brings up a lab of its own (a hub and eight spokes beside the worker's lab)
and takes it down after.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from lab.fleet import FleetStack
from lab.handle import ensure_lab
from lab.paths import REPO, lab_dir
from lab.register import GROUP, PLURAL, PROFILE_NAMESPACE, VERSION
from lab.stack import update_time
from runner.rollback import MARK
from tests.support.fleet import deployments_available
from tests.support.runner import run_runner
from tests.support.snapshot import (
    kept_by_policy,
    managed_uids,
    managed_versions,
    moved,
    snapshot,
)
from tests.support.topology import topology_lock

pytestmark = pytest.mark.e2e
SPOKES = 8
# shard -> (ring, spokes)
SHARDS = {
    "r1-a": (1, ["spoke-1", "spoke-2"]),
    "r1-b": (1, ["spoke-3", "spoke-4"]),
    "r2-a": (2, ["spoke-5", "spoke-6"]),
    "r2-b": (2, ["spoke-7", "spoke-8"]),
}
RING2 = [s for shard, (ring, spokes) in SHARDS.items() if ring == 2 for s in spokes]
BROKEN_SELECTOR = {"knative-fleet.test/no-such-node": "true"}


def group(shard: str, serving: dict) -> dict:
    return {"name": shard, "namespace": PROFILE_NAMESPACE,
            "selector": {"matchLabels": {"shard": shard}}, "serving": serving}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    where = lab_dir().root
    root = where.with_name(f"{where.name}-runner{SPOKES}")
    lab_cmd = [sys.executable, "-m", "lab", "--dir", str(root)]
    prefix = f"t-r{SPOKES}-{uuid.uuid4().hex[:6]}-"  # this run's stacks: prefix + shard
    state = tmp_path_factory.mktemp("state")
    stacks: dict[str, FleetStack] = {}
    try:
        with topology_lock(tmp_path_factory):
            flags = ["--webhooks"] if lab_dir().webhooks_on else []  # the suite's mode
            subprocess.run([*lab_cmd, "up", "--spokes", str(SPOKES), *flags], cwd=REPO,
                           check=True)
        lab = ensure_lab(root)
        hub = client.CustomObjectsApi(lab.hub.api())
        for shard, (_, spokes) in SHARDS.items():
            for name in spokes:
                hub.patch_namespaced_custom_object(
                    GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name,
                    {"metadata": {"labels": {"shard": shard}}})
        apis = {s.name: s.api() for s in lab.spokes}
        before = {name: snapshot(api) for name, api in apis.items()}
        for shard in SHARDS:
            stacks[shard] = FleetStack(lab, prefix + shard, state)
            stacks[shard].init()
        world = {"lab": lab, "stacks": stacks, "apis": apis, "before": before,
                 "prefix": prefix}
        configure(world, {"version": "1.23"})
        configure(world, {"version": "1.22"}, only="r1-b")
        yield world
    finally:
        for stack in stacks.values():
            stack.destroy()  # a no-op after the runner's destroy; the way out after a failure
            stack.remove()
            stack.cleanup()
        with topology_lock(tmp_path_factory):
            subprocess.run([*lab_cmd, "down"], cwd=REPO, check=False)


def configure(world: dict, serving: dict, only: str | None = None) -> None:
    for shard, (ring, _) in SHARDS.items():
        if only is None or shard == only:
            world["stacks"][shard].configure([], groups=[group(shard, serving)], ring=ring)


def runner(world: dict, *args: str) -> tuple[int, dict, str]:
    """`python -m runner ... --json` over this module's stacks."""
    stack = next(iter(world["stacks"].values()))
    return run_runner(*args, "--stacks", world["prefix"] + "*", env=stack.env,
                      timeout=3600)


def name(world: dict, shard: str) -> str:
    return world["prefix"] + shard




def test_the_runner_installs_ring_1_then_ring_2(fleet: dict) -> None:
    code, doc, text = runner(fleet, "up")
    assert code == 0, text
    assert doc["succeeded"] == [name(fleet, s) for s in SHARDS], doc
    latest = {s: stack.history()[0] for s, stack in fleet["stacks"].items()}
    ring1_end = max(update_time(latest[s], "endTime") for s in ("r1-a", "r1-b"))
    ring2_start = min(update_time(latest[s], "startTime") for s in ("r2-a", "r2-b"))
    assert ring2_start >= ring1_end, latest
    for spoke, api in fleet["apis"].items():
        states = deployments_available(api, "knative-serving")
        assert states and all(states.values()), (spoke, states)


def test_the_fleet_view_lists_every_spoke_with_its_version(fleet: dict) -> None:
    code, doc, _ = runner(fleet, "status")
    assert code == 0, doc
    seen = {sp["spoke"]: (s["stack"], s["ring"], sp["serving"], sp["ready"])
            for s in doc["stacks"] for sp in s["spokes"]}
    assert seen == {spoke: (name(fleet, shard), ring,
                            "1.22.1" if shard == "r1-b" else "1.23.0", True)
                    for shard, (ring, spokes) in SHARDS.items() for spoke in spokes}


def ring2_state(fleet: dict) -> tuple[dict, dict]:
    """Ring 2's stacks' update counts and its spokes' managed objects: the same before
    and after a run that never touched ring 2."""
    return ({s: len(fleet["stacks"][s].history()) for s in ("r2-a", "r2-b")},
            {s: managed_versions(fleet["apis"][s]) for s in RING2})


def serving_versions(api: client.ApiClient) -> set[str]:
    """The `app.kubernetes.io/version` of the spoke's Serving Deployments."""
    return {d.metadata.labels.get("app.kubernetes.io/version")
            for d in client.AppsV1Api(api).list_namespaced_deployment(
                "knative-serving").items}


def test_a_failed_upgrade_is_rolled_back_without_a_downgrade_and_not_applied_again(
        fleet: dict) -> None:
    """r1-b goes 1.22 -> 1.23 with a change that never gets healthy. The rollback returns
    to the last good config but keeps 1.23 (Knative does not support downgrades): the
    spokes run 1.23, healthy again, and the summary says so. The next run of the same
    failed config is refused, nothing applied, until the config changes."""
    stack = fleet["stacks"]["r1-b"]
    spokes = SHARDS["r1-b"][1]
    ring2_before = ring2_state(fleet)
    broken = {"version": "1.23", "workloads": [
        {"name": "controller", "nodeSelector": BROKEN_SELECTOR}]}
    timeout = {"waves": [{"name": "all", "timeout": "30s"}]}

    def configure_broken() -> None:
        stack.configure([], groups=[group("r1-b", broken)], ring=1, rollout=timeout)

    configure_broken()
    try:
        code, doc, text = runner(fleet, "up", "--rollback-on-failure")
        assert code == 1, text
        assert doc["failed"] == [name(fleet, "r1-b")], doc
        assert doc["failedSpokes"][name(fleet, "r1-b")] == spokes, doc["failedSpokes"]
        failed = next(s for r in doc["rings"] for s in r["stacks"]
                      if s["stack"] == name(fleet, "r1-b"))
        assert failed["error"].startswith("wave 'all' is not healthy"), failed["error"]
        assert "Exception calling application" not in json.dumps(doc), doc
        assert f"spokes: {', '.join(spokes)}" in text, text
        rolled = doc["rolledBack"][name(fleet, "r1-b")]
        assert rolled["status"] == "succeeded", rolled
        assert rolled["note"].startswith(
            "rolled back to the config of the update started "), rolled
        assert "keeping Serving 1.23 of group 'r1-b' (it was 1.22): Knative does not " \
            "support downgrades" in rolled["note"], rolled
        assert " 0 " not in rolled["note"] and "update 0" not in text, rolled
        for spoke in spokes:
            api = fleet["apis"][spoke]
            assert serving_versions(api) == {"1.23.0"}, spoke
            controller = client.AppsV1Api(api).read_namespaced_deployment(
                "controller", "knative-serving")
            assert not controller.spec.template.spec.node_selector, spoke
        latest = stack.history()[0]
        assert (latest["kind"], latest["result"]) == ("update", "succeeded"), latest
        assert latest["message"].startswith("knative-fleet rollback of config sha256:")
        assert ring2_state(fleet) == ring2_before

        # The same failed config again (the next push): refused, nothing applied.
        configure_broken()
        updates = len(stack.history())
        code, doc, text = runner(fleet, "up")
        assert code == 1, text
        assert doc["failed"] == [name(fleet, "r1-b")], doc
        refused = next(s for r in doc["rings"] for s in r["stacks"]
                       if s["stack"] == name(fleet, "r1-b"))
        assert refused["error"].startswith("refused: this config"), refused
        assert "--retry-rolled-back" in refused["error"], refused
        assert len(stack.history()) == updates
        assert ring2_state(fleet) == ring2_before
    finally:
        configure(fleet, {"version": "1.23"})


def test_a_stack_waiting_for_approval_is_not_rolled_back(fleet: dict) -> None:
    """r1-a's second wave needs approval. A change of both its spokes with
    --rollback-on-failure: the first wave applies it, the run stops before the second
    (exit 3), nothing is rolled back, and ring 2 is never touched."""
    first, second = SHARDS["r1-a"][1]
    stack = fleet["stacks"]["r1-a"]
    hub = client.CustomObjectsApi(fleet["lab"].hub.api())
    label = {"metadata": {"labels": {"knative-fleet.test/wave": "first"}}}
    hub.patch_namespaced_custom_object(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, first,
                                       label)
    waves = {"waves": [
        {"name": "first", "selector": {"matchLabels": {"knative-fleet.test/wave": "first"}}},
        {"name": "second", "approval": "Required"}]}
    only = ("--stacks", name(fleet, "r1-a"))
    try:
        stack.configure([], groups=[group("r1-a", {"version": "1.23"})], ring=1,
                        rollout=waves)
        code, doc, text = run_runner("up", *only, "--approve", "second", env=stack.env,
                                     timeout=3600)
        assert code == 0, text
        ring2_before = ring2_state(fleet)
        updates = len(stack.history())
        stack.configure([], groups=[group("r1-a", {"version": "1.23", "config": {
            "autoscaler": {"enable-scale-to-zero": "false"}}})], ring=1, rollout=waves)
        code, doc, text = runner(fleet, "up", "--rollback-on-failure")
        assert code == 3, text
        assert doc["waitingApproval"] == [name(fleet, "r1-a")], doc
        assert "rolledBack" not in doc, doc
        assert f"not rolled back  {name(fleet, 'r1-a')}: it waits for approval" in text
        waiting = next(s for r in doc["rings"] for s in r["stacks"]
                       if s["stack"] == name(fleet, "r1-a"))
        assert waiting["error"].startswith("wave 'second' waits for approval"), waiting
        assert doc["failedSpokes"][name(fleet, "r1-a")] == [], doc["failedSpokes"]
        # The stopped run recorded what waits: the fleet-wide view names the wave.
        code, view, text = run_runner("status", *only, env=stack.env)
        assert code == 0, text
        [shown] = view["stacks"]
        assert shown["waitingApproval"] == ["second"], shown
        assert shown["waves"] == {"first": "Completed", "second": "WaitingForApproval"}, shown
        assert {s["spoke"]: s["waveStatus"] for s in shown["spokes"]} == {
            first: "Completed", second: "WaitingForApproval"}, shown
        assert view["totals"]["waitingApproval"] == 1, view["totals"]
        history = stack.history()
        assert len(history) == updates + 1, history[:2]
        assert MARK not in (history[0].get("message") or ""), history[0]
        assert {s: scale_to_zero(fleet["apis"][s]) for s in (first, second)} == {
            first: "false", second: None}
        assert ring2_state(fleet) == ring2_before
    finally:
        hub.patch_namespaced_custom_object(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, first,
                                           {"metadata": {"labels": {
                                               "knative-fleet.test/wave": None}}})
        configure(fleet, {"version": "1.23"}, only="r1-a")
        run_runner("up", *only, env=stack.env, timeout=3600)


def scale_to_zero(api: client.ApiClient) -> str | None:
    data = client.CoreV1Api(api).read_namespaced_config_map(
        "config-autoscaler", "knative-serving").data or {}
    return data.get("enable-scale-to-zero")


def test_a_failure_in_ring_1_leaves_ring_2_untouched(fleet: dict) -> None:
    ring2_before = ring2_state(fleet)
    # A change for every shard, and in r1-b a version the release base does not have.
    configure(fleet, {"version": "1.23",
                      "config": {"autoscaler": {"scale-to-zero-grace-period": "45s"}}})
    configure(fleet, {"version": "1.99"}, only="r1-b")
    try:
        code, doc, text = runner(fleet, "up")
        assert code == 1, text
        assert doc["failed"] == [name(fleet, "r1-b")], doc
        assert doc["untouched"] == [name(fleet, "r2-a"), name(fleet, "r2-b")], doc
        assert doc["stoppedAtRing"] == 1
        assert "ManifestsUnavailable" in json.dumps(doc["rings"][0]), doc["rings"][0]
        assert ring2_state(fleet) == ring2_before
    finally:
        configure(fleet, {"version": "1.23"})


def test_a_failed_ring_is_rolled_back_and_the_next_ring_is_untouched(fleet: dict) -> None:
    """A change that never gets healthy in r1-a: with --rollback-on-failure the runner
    returns r1-a to the config of its last successful update, every object keeps its
    uid, and ring 2 is never touched."""
    ring1 = SHARDS["r1-a"][1]
    uids = {s: managed_uids(fleet["apis"][s]) for s in ring1}
    ring2_before = ring2_state(fleet)
    good = fleet["stacks"]["r1-a"].history()[0]
    assert good["result"] == "succeeded", good
    fleet["stacks"]["r1-a"].configure(
        [], groups=[group("r1-a", {"version": "1.23", "workloads": [
            {"name": "controller", "nodeSelector": BROKEN_SELECTOR}]})],
        ring=1, rollout={"waves": [{"name": "all", "timeout": "30s"}]})
    try:
        code, doc, text = runner(fleet, "up", "--rollback-on-failure")
        assert code == 1, text
        assert doc["failed"] == [name(fleet, "r1-a")], doc
        assert doc["untouched"] == [name(fleet, "r2-a"), name(fleet, "r2-b")], doc
        assert doc["failedSpokes"][name(fleet, "r1-a")] == ring1, doc["failedSpokes"]
        assert f"spokes: {', '.join(ring1)}" in text, text
        rolled = doc["rolledBack"][name(fleet, "r1-a")]
        assert rolled["status"] == "succeeded", rolled
        assert rolled["note"].startswith("rolled back to the config of the update started"), \
            rolled
        assert "Rollback of the failed ring:" in text and "rolled back  " in text, text
        for spoke in ring1:
            controller = client.AppsV1Api(fleet["apis"][spoke]).read_namespaced_deployment(
                "controller", "knative-serving")
            assert not controller.spec.template.spec.node_selector, spoke
            changed = moved(uids[spoke], managed_uids(fleet["apis"][spoke]))
            assert changed == {}, (spoke, changed)
        latest = fleet["stacks"]["r1-a"].history()[0]
        assert (latest["kind"], latest["result"]) == ("update", "succeeded"), latest
        assert ring2_state(fleet) == ring2_before
    finally:
        configure(fleet, {"version": "1.23"})


def test_destroy_through_the_runner_leaves_nothing(fleet: dict) -> None:
    code, doc, text = runner(fleet, "destroy")
    assert code == 0, text
    assert doc["succeeded"] == [name(fleet, s) for s in SHARDS], doc
    leaked = {}
    for spoke, api in fleet["apis"].items():
        after = snapshot(api)
        left = sorted(after - fleet["before"][spoke] - kept_by_policy(after))
        if left:
            leaked[spoke] = left[:10]
    assert leaked == {}
    for stack in fleet["stacks"].values():
        assert stack.outputs() == {}, stack.stack

