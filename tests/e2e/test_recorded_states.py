"""Stack states written by released commits stay this checkout's to manage: its preview
of each deletes and replaces nothing (its typed resources of objects a step now holds,
kept on delete, leave the state: the CRDs-first, cluster-RBAC and namespaced-objects
steps hold them); its `up` of one updates it in place, keeps every CRD, ClusterRole,
ClusterRoleBinding, ServiceAccount, Role, RoleBinding and Service the release created
(same uid) and, after a second `up` that lets the typed resources the
state would have deleted go (fleet.held_typed), leaves a no-op preview empty; and
`pulumi destroy` of each removes the install, the CRDs as `deleteCrdsOnDestroy` says,
and leaves nothing else.

The states are recorded on the lab at test time by the released program itself (the
commits below, written out of git and run by the real engine), so they hold that
release's URNs and types and, above all, its pickled dynamic providers: `pulumi destroy`
runs no program and unpickles those providers by their module paths, in this
checkout's code. A module or class they name that moved without a name left behind
fails here. The last release's states (their outputs say `crdsHeld`: the typed CRDs are
gone, the typed ClusterRoles not) and the states of the release before the CRDs-first
steps. Three shapes cover every dynamic resource the program registers but the approval
gate: one spoke with Serving and Eventing, CRDs deleted on destroy (the membership, the
aggregated-role guards and sweep, the owner guard, the webhook-configuration removers),
two spokes, CRDs kept, both updated by this checkout, and two spokes chosen by a label
group in two waves (the wave gates too), destroyed exactly as the release wrote it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from core.resource_types import (
    APPROVAL_GATE,
    CLUSTER_RBAC,
    DYNAMIC_KINDS,
    HELD_TYPES,
    NAMESPACED_OBJECTS,
)
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
# The released commits whose states are recorded: the last one (the newest whose CI
# passed and that landed on main: typed ClusterRoles and ClusterRoleBindings, CRDs held
# by their CRDs-first steps, its outputs saying `crdsHeld`), and the one before the
# CRDs-first steps (typed CRDs too).
LAST_RELEASE = "6bc8015e7b2ed563668fba10a634c446cb755288"
TYPED_CRDS_RELEASE = "d234b188bc969a86986498940d7413565cb7124b"
# Dynamic resources no recorded state holds: the approval gate stands only before a wave
# that needs approval and has changes, which no shape has; the cluster-RBAC step is newer
# than the released commits.
UNRECORDED_KINDS = {APPROVAL_GATE.type, CLUSTER_RBAC.type, NAMESPACED_OBJECTS.type}
DESTRUCTIVE = {"delete", "replace", "create-replacement", "delete-replaced",
               "discard", "discard-replaced"}
RINGS = {"spoke-1": "canary", "spoke-2": "main"}
# The spoke identity's Secret reads (knative.secret_reads): a typed Role and RoleBinding
# of the program's own, not held by a step.
SECRET_READS = "knative-fleet-secret-reads"


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
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each released commit's project, written out of git once for the module."""
    out = {}
    for commit in (LAST_RELEASE, TYPED_CRDS_RELEASE):
        project = write_out(commit, tmp_path_factory.mktemp("released") / "project")
        (project / ".venv").symlink_to(REPO / ".venv")  # Pulumi.yaml's virtualenv: this one's
        out[commit] = project
    return out


@pytest.fixture(scope="module")
def kinds_seen() -> set[str]:
    return set()


def state_resources(stack: FleetStack) -> list[dict]:
    """The resources of the stack's state; none when it has no state (yet)."""
    res = stack.run("stack", "export", "--show-secrets=false")
    return (json.loads(res.out).get("deployment") or {}).get("resources") or [] \
        if res.ok else []


# (release, shape): every shape by the release before the CRDs-first steps; the updated
# shapes by the last release.
RECORDED = [(TYPED_CRDS_RELEASE, shape) for shape in sorted(SHAPES)] + [
    (LAST_RELEASE, shape) for shape in sorted(UPDATED)]


@pytest.fixture(params=RECORDED, ids=[f"{c[:7]}-{s}" for c, s in RECORDED])
def recorded(request: pytest.FixtureRequest, lab: Lab, releases: dict[str, Path],
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A stack installed by a released commit, and what its spokes held before."""
    commit, shape_name = request.param
    released = releases[commit]
    shape = SHAPES[shape_name](lab)
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
        assert installed.ok, f"{commit[:10]} failed to install:\n{installed.out}"
        # This checkout runs on the state and the stack file as the release left them.
        new.config_file(REPO / "stacks").write_bytes(
            old.config_file(released / "stacks").read_bytes())
        yield {"shape": shape_name, "commit": commit, "old": old, "new": new, "apis": apis,
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
    assert bad == [], f"{recorded['shape']} recorded by {recorded['commit'][:10]}: {bad[:20]}"

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
        # Its typed ClusterRoles and ClusterRoleBindings, and in the one-spoke shape its
        # typed CRDs (deleted on destroy), would have been deleted: that `up` kept them
        # registered, now kept on delete, and the next one lets them go, deleting nothing
        # from the spoke (fleet.held_typed).
        assert changed and all(released_from_state(s) for s in steps
                               if s["op"] != "same"), changed[:20]
        roles = cluster_rbac(recorded["apis"])
        assert new.up().ok
        assert cluster_rbac(recorded["apis"]) == roles
        for spoke, uids in crds.items():
            assert crd_uids(recorded["apis"][spoke]) == uids, spoke
        again, steps = new.preview_steps()
        assert again.ok, again.why
        changed = [(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps if s["op"] != "same"]
        assert changed == [], changed[:20]
        # Held by their steps alone: no typed CRD, and no typed ClusterRole but the
        # aggregated ones, left in the state.
        left = [(r["type"], r["urn"].rsplit("::", 1)[-1])
                for r in new.export()["deployment"]["resources"] if r["type"] in HELD_TYPES
                and "aggregationRule" not in (r.get("inputs") or {})
                and not r["urn"].endswith("/" + SECRET_READS)]
        assert left == [], left[:10]
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
    """A typed resource of an object a step now holds (a CRD, a ClusterRole or
    ClusterRoleBinding), kept on delete, leaving the state: the object stays on the
    spoke, held by its step (fleet.held_typed). Not an aggregated ClusterRole: its guard
    deletes it."""
    old = step.get("oldState") or {}
    return (step["op"] == "delete" and old.get("type") in HELD_TYPES
            and bool(old.get("retainOnDelete"))
            and "aggregationRule" not in (old.get("inputs") or {}))


def cluster_rbac(apis: dict[str, client.ApiClient]) -> dict[str, str]:
    """{spoke/kind/namespace/name: uid} of the spokes' Knative objects the steps now hold
    (ClusterRoles, ClusterRoleBindings, ServiceAccounts, Roles, RoleBindings, Services;
    the fleet's label): the same uids after an `up` mean none was deleted."""
    out = {}
    selector = "app.kubernetes.io/managed-by=knative-fleet"
    for spoke, api in apis.items():
        rbac, core = client.RbacAuthorizationV1Api(api), client.CoreV1Api(api)
        for kind, listed in (
                ("ClusterRole", rbac.list_cluster_role),
                ("ClusterRoleBinding", rbac.list_cluster_role_binding),
                ("Role", rbac.list_role_for_all_namespaces),
                ("RoleBinding", rbac.list_role_binding_for_all_namespaces),
                ("ServiceAccount", core.list_service_account_for_all_namespaces),
                ("Service", core.list_service_for_all_namespaces)):
            for item in listed(label_selector=selector).items:
                key = f"{spoke}/{kind}/{item.metadata.namespace or ''}/{item.metadata.name}"
                out[key] = item.metadata.uid
    return out


def crd_uids(api: client.ApiClient) -> dict[str, str]:
    """{name: uid} of the spoke's Knative CRDs."""
    listed = client.ApiextensionsV1Api(api).list_custom_resource_definition().items
    return {c.metadata.name: c.metadata.uid for c in listed
            if c.metadata.name.endswith(".knative.dev")}


def test_the_recorded_states_hold_every_dynamic_resource(kinds_seen: set[str]) -> None:
    """Runs after both shapes (pytest keeps the order of a module's tests)."""
    missing = {k.type for k in DYNAMIC_KINDS} - UNRECORDED_KINDS - kinds_seen
    assert kinds_seen and missing == set(), f"no recorded state holds {sorted(missing)}"
