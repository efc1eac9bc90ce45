"""Stack states written by the last released commit stay this checkout's to manage:
its preview of each deletes and replaces nothing (its typed CRDs, kept on delete, leave
the state: the CRDs-first steps hold them); its `up` of one updates it in place, keeps
every CRD the release created (same uid) and leaves a no-op preview empty (a state whose
typed CRDs were deleted on destroy after a second `up`: fleet.held_crds); and
`pulumi destroy` of each removes the install, the CRDs as `deleteCrdsOnDestroy` says,
and leaves nothing else.

The states are recorded on the lab at test time by the released program itself (the
commit below, written out of git and run by the real engine), so they hold that
release's URNs and types and, above all, its pickled dynamic providers: `pulumi destroy`
runs no program and unpickles those providers by their module paths, in this
checkout's code. A module or class they name that moved without a name left behind
fails here. Three shapes cover every dynamic resource the program registers but the
approval gate: one spoke with Serving and Eventing, CRDs deleted on destroy (the
membership, the aggregated-role guards and sweep, the owner guard, the
webhook-configuration removers), two spokes, CRDs kept, both updated by this checkout
(which adds its CRDs-first step to a stack that holds its CRDs already), and two spokes
chosen by a label group in two waves (the wave gates too), destroyed exactly as the
release wrote it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from core.resource_types import APPROVAL_GATE, CRDS_FIRST, DYNAMIC_KINDS
from fleet.held_crds import CRD_TYPE
from lab.admitted import previous_release_rights, state_reads
from lab.fleet import FleetStack, fleet_config
from lab.handle import Lab
from lab.paths import REPO
from lab.register import PROFILE_NAMESPACE
from lab.stack import Stack
from tests.support.fleet import deployments_available
from tests.support.previous_version import write_out
from tests.support.snapshot import kept_by_policy, snapshot
from tests.support.topology import relabel

pytestmark = pytest.mark.e2e
# The last released commit: the newest one whose CI passed and that landed on main.
RELEASED_COMMIT = "d234b188bc969a86986498940d7413565cb7124b"
# Dynamic resources no recorded state holds: the approval gate stands only before a wave
# that needs approval and has changes, which neither shape has; the CRDs-first step is
# newer than the released commit.
UNRECORDED_KINDS = {APPROVAL_GATE.type, CRDS_FIRST.type}
DESTRUCTIVE = {"delete", "replace", "create-replacement", "delete-replaced",
               "discard", "discard-replaced"}
RINGS = {"spoke-1": "canary", "spoke-2": "main"}


def spoke_entry(name: str, delete_crds: bool) -> dict:
    """Serving and Eventing 1.23 on `name`, their CRDs deleted on destroy or kept."""
    return {"name": name, "clusterProfileRef": {"name": name, "namespace": PROFILE_NAMESPACE},
            **{c: {"version": "1.23", "deleteCrdsOnDestroy": delete_crds}
               for c in ("serving", "eventing")}}


def one_spoke(lab: Lab) -> dict:
    del lab
    return {"fleet": [spoke_entry("spoke-1", delete_crds=True)]}


def two_spokes(lab: Lab) -> dict:
    del lab
    return {"fleet": [spoke_entry(name, delete_crds=False) for name in RINGS]}


def two_spokes_in_waves(lab: Lab) -> dict:
    del lab
    return {"fleet": [],
            "groups": [{"name": "lab", "namespace": PROFILE_NAMESPACE,
                        "selector": {"matchLabels": {"env": "recorded"}},
                        "serving": {"version": "1.23"}}],
            "rollout": {"waves": [
                {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}},
                 "timeout": "5m"},
                {"name": "main", "timeout": "5m"}]}}


SHAPES = {"one-spoke": one_spoke, "two-spokes": two_spokes,
          "two-spokes-in-waves": two_spokes_in_waves}
# The shapes this checkout runs `up` on (the CRDs-first step added to a stack that holds
# its CRDs already); the waves shape is destroyed exactly as the release wrote it.
UPDATED = {"one-spoke", "two-spokes"}


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The released commit's project, written out of git once for the module."""
    project = write_out(RELEASED_COMMIT, tmp_path_factory.mktemp("released") / "project")
    (project / ".venv").symlink_to(REPO / ".venv")  # Pulumi.yaml's virtualenv: this one's
    return project


@pytest.fixture(scope="module")
def kinds_seen() -> set[str]:
    return set()


def state_resources(stack: FleetStack) -> list[dict]:
    """The resources of the stack's state; none when it has no state (yet)."""
    res = stack.run("stack", "export", "--show-secrets=false")
    return (json.loads(res.out).get("deployment") or {}).get("resources") or [] \
        if res.ok else []


@pytest.fixture(params=sorted(SHAPES))
def recorded(request: pytest.FixtureRequest, lab: Lab, released: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A stack installed by the released commit, and what its spokes held before."""
    shape = SHAPES[request.param](lab)
    apis = {s.name: s.api() for s in lab.spokes[:2]}
    before = {name: snapshot(api) for name, api in apis.items()}
    state = tmp_path_factory.mktemp("state")
    name = f"t-recorded-{uuid.uuid4().hex[:6]}"
    old = Stack(released, name, state, lab.bin)
    new = FleetStack(lab, name, state)
    for spoke, ring in RINGS.items():
        relabel(lab, spoke, {"env": "recorded", "ring": ring})
    overrides = {k: v for k, v in shape.items() if k != "fleet"}
    try:
        old.init()
        config = fleet_config(lab, shape["fleet"], **overrides)
        old.write_config(released / "stacks", config)
        with previous_release_rights(lab, config):  # the rights printed by the release
            installed = old.up()
        assert installed.ok, f"{RELEASED_COMMIT[:10]} failed to install:\n{installed.out}"
        # This checkout runs on the state and the stack file as the release left them.
        new.config_file(REPO / "stacks").write_bytes(
            old.config_file(released / "stacks").read_bytes())
        yield {"shape": request.param, "old": old, "new": new, "apis": apis,
               "before": before, "lab": lab}
    finally:
        # A no-op once the test destroyed it; a cleanup when it failed first.
        with state_reads(lab, state_resources(new)):
            new.destroy()
        new.remove()
        new.cleanup()
        for spoke in RINGS:
            relabel(lab, spoke, {"env": None, "ring": None})


def test_a_recorded_state_previews_without_delete_or_replace_and_destroys(
        recorded: dict, kinds_seen: set[str]) -> None:
    new: FleetStack = recorded["new"]
    resources = new.export()["deployment"]["resources"]
    kinds_seen.update(r["type"] for r in resources)
    assert any(r["type"].startswith("pulumi-python:dynamic/") for r in resources)
    installed = ["spoke-1"] if recorded["shape"] == "one-spoke" else sorted(RINGS)
    crds = {spoke: crd_uids(recorded["apis"][spoke]) for spoke in installed}
    for spoke in installed:
        states = deployments_available(recorded["apis"][spoke], "knative-serving")
        assert states and all(states.values()), (spoke, states)

    preview, steps = new.preview_steps()
    assert preview.ok, preview.why
    bad = [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps
           if s["op"] in DESTRUCTIVE and not released_from_state(s)]
    assert bad == [], f"{recorded['shape']} recorded by {RELEASED_COMMIT[:10]}: {bad[:20]}"

    if recorded["shape"] in UPDATED:
        # This checkout's `up` of the release's state: in place, nothing deleted, every CRD
        # the one the release created (same uid: neither replaced nor deleted and made
        # again), and nothing left to change after it.
        updated = new.up()
        assert updated.ok, updated.why
        changes = new.history()[0].get("resourceChanges") or {}
        released = sum(1 for s in steps if released_from_state(s))
        assert changes.get("delete", 0) == released, (changes, released)
        assert not set(changes) & (DESTRUCTIVE - {"delete"}), changes
        for spoke, uids in crds.items():
            assert uids and crd_uids(recorded["apis"][spoke]) == uids, spoke
        again, steps = new.preview_steps()
        assert again.ok, again.why
        changed = [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps if s["op"] != "same"]
        if recorded["shape"] == "one-spoke":
            # Its typed CRDs were deleted on destroy: that `up` kept them registered, now
            # kept on delete, and the next one lets them go (fleet.held_crds).
            assert changed and all(released_from_state(s) for s in steps
                                   if s["op"] != "same"), changed[:20]
            assert new.up().ok
            for spoke, uids in crds.items():
                assert crd_uids(recorded["apis"][spoke]) == uids, spoke
            again, steps = new.preview_steps()
            assert again.ok, again.why
            changed = [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps
                       if s["op"] != "same"]
        assert changed == [], changed[:20]
        # Held by the CRDs-first steps alone: no typed CRD left in the state.
        types = {r["type"] for r in new.export()["deployment"]["resources"]}
        assert CRD_TYPE not in types
    # The waves state exactly as the release wrote it, the others after this checkout's
    # `up`: the pickled providers a state holds run the deletes.
    # A state the release wrote holds no Secret-reads bindings yet: the rights printed for
    # it hold the reads until its next `up` (operations.state_reads).
    with state_reads(recorded["lab"], state_resources(new)):
        destroyed = new.destroy()
    assert destroyed.ok, destroyed.why
    for spoke, api in recorded["apis"].items():
        after = snapshot(api)
        leaked = after - recorded["before"][spoke] - kept_by_policy(after)
        assert leaked == set(), (recorded["shape"], spoke, sorted(leaked)[:20])
    if recorded["shape"] == "one-spoke":  # deleteCrdsOnDestroy: true
        left = set(crd_uids(recorded["apis"]["spoke-1"])) & set(crds["spoke-1"])
        assert left == set(), sorted(left)
    elif recorded["shape"] == "two-spokes":  # deleteCrdsOnDestroy: false
        for spoke, uids in crds.items():
            assert crd_uids(recorded["apis"][spoke]) == uids, spoke


def released_from_state(step: dict) -> bool:
    """A typed CRD the state keeps on delete leaving it: the CRD stays on the spoke."""
    old = step.get("oldState") or {}
    return (step["op"] == "delete" and old.get("type") == CRD_TYPE
            and bool(old.get("retainOnDelete")))


def crd_uids(api: client.ApiClient) -> dict[str, str]:
    """{name: uid} of the spoke's Knative CRDs."""
    listed = client.ApiextensionsV1Api(api).list_custom_resource_definition().items
    return {c.metadata.name: c.metadata.uid for c in listed
            if c.metadata.name.endswith(".knative.dev")}


def test_the_recorded_states_hold_every_dynamic_resource(kinds_seen: set[str]) -> None:
    """Runs after both shapes (pytest keeps the order of a module's tests)."""
    missing = {k.type for k in DYNAMIC_KINDS} - UNRECORDED_KINDS - kinds_seen
    assert kinds_seen and missing == set(), f"no recorded state holds {sorted(missing)}"
