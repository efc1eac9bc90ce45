"""The offline review reports what the live one reports, on a lab with the real engine:
one stack of two spokes (Serving and Eventing 1.22) in two waves installed once, then
five changes previewed and never applied, each reviewed live (`python -m review`: the
preview reaches the hub and every spoke) and offline (a ClusterProfile snapshot and
`pulumi stack export` taken first, then from a copy of the stack file whose hub is a
closed port and whose provider file does not exist, with no kubeconfig and an empty
PATH: nothing it could reach): a config key, a version step, a new spoke chosen by a
group's label selector (the label added to a third ClusterProfile, then taken off), HA
replicas and a change in a wave that needs approval. The two reports name the same
objects of every spoke and of the fleet, with the same totals and the same items that
need a human. Each review's time and peak memory are printed side by side."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.fleet import FleetStack, entry
from lab.handle import Lab, ensure_lab
from lab.register import PROFILE_NAMESPACE
from tests.support.fleet import module_stack
from tests.support.offline_review import (
    changes,
    export_state,
    live_review,
    offline_review,
    snapshot_profiles,
)
from tests.support.topology import lab_with, relabel

pytestmark = pytest.mark.e2e
BASE = [entry("spoke-1", serving="1.22", eventing="1.22"),
        entry("spoke-2", serving="1.22", eventing="1.22")]
NEW_SPOKE = "spoke-3"
LABEL = {"knative-fleet.test/offline-review": "yes"}
CANARY = {"knative-fleet.test/offline-wave": "canary"}
ROLLOUT = {"waves": [{"name": "canary", "selector": {"matchLabels": CANARY}},
                     {"name": "main"}]}
APPROVAL = {"waves": [ROLLOUT["waves"][0], {"name": "main", "approval": "Required"}]}
GROUP_BY_LABEL = {"name": "offline", "namespace": PROFILE_NAMESPACE,
                  "selector": {"matchLabels": LABEL}, "serving": {"version": "1.23"}}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The lab with a third ClusterProfile (a cluster nothing is installed on), the stack
    installed on the first two, and its state exported once."""
    lab_with(3, tmp_path_factory)
    lab3 = ensure_lab()
    relabel(lab3, "spoke-1", CANARY)
    try:
        with module_stack(lab3, "offline", tmp_path_factory.mktemp("state")) as stack:
            stack.configure(BASE, rollout=ROLLOUT)
            res = stack.up()
            assert res.ok, res.why
            work = tmp_path_factory.mktemp("reviews")
            export_state(stack, work / "state.json")
            yield {"lab": lab3, "stack": stack, "work": work, "timings": {}}
    finally:
        relabel(lab3, "spoke-1", {k: None for k in CANARY})
        lab_with(len(lab.spokes), tmp_path_factory)


def configured(kind: str) -> tuple[list[dict], dict]:
    fleet = copy.deepcopy(BASE)
    extra: dict = {"rollout": ROLLOUT}
    if kind == "config-key":
        fleet[0]["serving"]["config"] = {"defaults": {"revision-timeout-seconds": "123"}}
    elif kind == "version-step":
        fleet[1]["serving"]["version"] = "1.23"
    elif kind == "new-spoke-by-label":
        extra["groups"] = [GROUP_BY_LABEL]
    elif kind == "ha-replicas":
        fleet[0]["serving"]["high-availability"] = {"replicas": 2}
    elif kind == "approval-wave":
        fleet[1]["serving"]["config"] = {"defaults": {"revision-timeout-seconds": "123"}}
        extra["rollout"] = APPROVAL
    return fleet, extra


# What each change must touch at least, so that an empty pair of reports fails.
EXPECTED = {
    "config-key": {("spoke-1", "kubernetes:core/v1:ConfigMap",
                    "knative-serving/config-defaults", "updated")},
    "version-step": {("spoke-2", "kubernetes:apps/v1:Deployment",
                      "knative-serving/activator", "updated"),
                     ("spoke-2", "kubernetes:batch/v1:Job",
                      "knative-serving/cleanup-serving-serving-1.22.1", "deleted")},
    "new-spoke-by-label": {(NEW_SPOKE, "knative-fleet:index:Spoke", NEW_SPOKE, "created")},
    "ha-replicas": {("spoke-1", "kubernetes:apps/v1:Deployment",
                     "knative-serving/controller", "updated")},
    "approval-wave": {("spoke-2", "kubernetes:core/v1:ConfigMap",
                       "knative-serving/config-defaults", "updated"),
                      ("(fleet)", "pulumi-python:dynamic/knative-fleet:ApprovalGate",
                       "approval-main", "created")},
}


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_offline_review_names_the_live_reviews_changes(world: dict, kind: str) -> None:
    stack: FleetStack = world["stack"]
    work: Path = world["work"] / kind
    fleet, extra = configured(kind)
    labelled = kind == "new-spoke-by-label"
    try:
        if labelled:
            relabel(world["lab"], NEW_SPOKE, LABEL)
        stack.configure(fleet, **extra)
        snapshot_profiles(stack, work.with_suffix(".profiles.json"))
        live = live_review(stack, work / "live")
        offline = offline_review(stack, work.with_suffix(".profiles.json"),
                                 world["work"] / "state.json", work / "offline")
    finally:
        if labelled:
            relabel(world["lab"], NEW_SPOKE, {k: None for k in LABEL})
        stack.configure(BASE, rollout=ROLLOUT)
    assert live.code == 0, live.output
    assert offline.code == 0, offline.output
    got, want = changes(offline.report), changes(live.report)
    assert got == want, {"only offline": sorted(got - want), "only live": sorted(want - got)}
    assert EXPECTED[kind] <= want
    assert offline.report["totals"] == live.report["totals"], (
        offline.report["totals"], live.report["totals"])
    assert (sorted(p["text"] for p in offline.report["needsHuman"])
            == sorted(p["text"] for p in live.report["needsHuman"]))
    assert "04da6b54-80e4-46f7-96ec-b56ff0331ba9" not in json.dumps(offline.report)
    assert offline.report["offline"]["cannotKnow"]
    world["timings"][kind] = (live, offline)
    print(f"\n{kind}: {len(want)} changed objects; live review {live.seconds:.1f} s, "
          f"peak {live.peak_mib:.0f} MiB; offline review {offline.seconds:.1f} s, "
          f"peak {offline.peak_mib:.0f} MiB")
    assert offline.seconds < live.seconds


def test_nothing_was_applied(world: dict) -> None:
    """Previews only: the stack still has its two spokes at 1.22, as installed."""
    out = world["stack"].outputs()["spokes"]
    assert sorted(out) == ["spoke-1", "spoke-2"]
    assert {s["serving"] for s in out.values()} == {"1.22.1"}
