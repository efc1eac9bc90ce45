"""One owner per spoke, on the lab with the real engine and the released Pulumi binaries.

Stack A installs Serving on spoke-1 and records itself on the spoke. Stack B, selecting
the same ClusterProfile, is refused in preview and in `up` with
SpokeOwnedByAnotherStack naming A, writes nothing there, and its destroy removes
nothing. `python -m operations hand-over` then moves spoke-1 from A to B: B's `up` adopts
every object in place (no delete, no re-create: every uid kept), A's next `up` and its
`destroy` leave the spoke alone, and B's preview afterwards shows no change. Last, a
spoke with a KnativeServing CR of the Knative Operator is refused, naming the CR. Then
the delete side: with A's record written on the anchors of B's install (as A would
write it), B's `destroy` and an `up` of B that drops the spoke both fail at the spoke's
owner guard naming A, and delete nothing; with B's record back, B's destroy removes
the install.

The tests share one lab and the two stacks, and run in file order; Serving is installed
once."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.idempotent import create_if_absent, delete_if_present
from lab.operator import GROUP, PLURALS, VERSION, KnativeOperator, cr, remove_operator
from lab.paths import REPO
from lab.removal import delete_namespaces
from lab.stack import Result
from ownership.identity import OWNER_ID_OUTPUT, owner_name
from tests.support.fleet import changed_spokes, module_stack
from tests.support.operator_lab import clean_spoke
from tests.support.snapshot import kept_by_policy, managed_uids, managed_versions

pytestmark = pytest.mark.e2e
OWNER = "knative-fleet.dev/owner"
OWNER_ID = "knative-fleet.dev/owner-id"
ANCHOR = ("knative-serving", "knativeserving-knative-serving-root-owner")
SPOKE_1 = [entry("spoke-1", eventing=None)]
RELEASED = "released"  # the Pulumi CLI and provider users run (core.settings)


@dataclass
class World:
    lab: Lab
    a: FleetStack
    b: FleetStack
    state: Path
    tmp: Path
    ids: dict[str, str] = field(default_factory=dict)

    def owner(self, stack: FleetStack) -> str:
        """The stack's owner name, as its records show it to people."""
        return owner_name(f"file://{self.state}", "organization", "knative-fleet",
                          stack.stack)

    def owner_id(self, stack: FleetStack) -> str:
        """The owner id the stack's state keeps (remembered: A's destroy drops it)."""
        if stack.stack not in self.ids:
            self.ids[stack.stack] = stack.outputs()[OWNER_ID_OUTPUT]
        return self.ids[stack.stack]


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("owner")
    state = tmp / "state"  # one backend for both stacks, as a hand-over needs
    try:
        with module_stack(lab, "own-a", state, fleet=SPOKE_1, binaries=RELEASED) as a, \
                module_stack(lab, "own-b", state, binaries=RELEASED) as b:
            yield World(lab, a, b, state, tmp)
    finally:
        # A test that failed between the hand-over and B's `up` leaves an install no
        # stack holds (by design: nothing deletes it); the next module needs spoke-1 empty.
        clean_spoke(lab, spoke_api(lab))


def spoke_api(lab: Lab, index: int = 0) -> client.ApiClient:
    return lab.spokes[index].api()


def recorded_owner(api: client.ApiClient) -> str | None:
    anchor = client.CoreV1Api(api).read_namespaced_config_map(ANCHOR[1], ANCHOR[0])
    return (anchor.metadata.annotations or {}).get(OWNER)


def test_a_second_stack_is_refused_and_changes_nothing(world: World) -> None:
    api = spoke_api(world.lab)
    owner_a = world.owner(world.a)
    assert recorded_owner(api) == owner_a
    before = managed_versions(api)
    assert before, "stack A installed nothing on spoke-1"

    world.b.configure(SPOKE_1)
    for res in (world.b.preview(), world.b.up()):
        assert not res.ok, res.out
        assert "spoke 'spoke-1': SpokeOwnedByAnotherStack" in res.out, res.out
        assert f"stack '{owner_a} (owner id {world.owner_id(world.a)})' manages this " \
            "spoke" in res.out, res.out
        assert (f"python -m operations hand-over --spoke spoke-1 --from-stack "
                f"organization/knative-fleet/{world.a.stack} --to-stack "
                f"organization/knative-fleet/{world.b.stack}") in res.out, res.out
    assert managed_versions(api) == before

    res = world.b.destroy()
    assert res.ok, res.why
    assert managed_versions(api) == before
    assert recorded_owner(api) == owner_a


def test_a_hand_over_moves_the_spoke_without_deleting_an_object(world: World) -> None:
    api = spoke_api(world.lab)
    before = managed_uids(api)
    backups = world.tmp / "backups"
    proc = subprocess.run(
        [sys.executable, "-m", "operations", "hand-over", "--spoke", "spoke-1",
         "--from-stack", world.a.stack, "--to-stack", world.b.stack,
         "--backup-dir", str(backups)],
        cwd=REPO, env=world.a.env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert recorded_owner(api) == world.owner(world.b)
    assert not [r for r in world.a.export()["deployment"]["resources"]
                if "spoke-1" in r["urn"]]
    (backup,) = (p for p in backups.glob("*.json") if "without" not in p.name)
    assert any("spoke-1" in r["urn"]
               for r in json.loads(backup.read_text())["deployment"]["resources"])

    # The spoke moves in config: out of A's selection, into B's (B has it already).
    world.a.configure([])
    res, steps = world.b.preview_steps()
    assert res.ok, res.why
    # B's destroy removed its stack resource too: that comes back as well.
    steps = [s for s in steps if "::pulumi:pulumi:Stack::" not in s["urn"]]
    assert changed_spokes(steps) == {"spoke-1": {"create"}}, changed_spokes(steps)
    res = world.b.up()
    assert res.ok, res.why
    assert managed_uids(api) == before

    for res in (world.a.up(), world.a.destroy()):
        assert res.ok, res.why
        assert managed_uids(api) == before
    assert recorded_owner(api) == world.owner(world.b)

    res, steps = world.b.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, changed_spokes(steps)


def hand_over(world: World, to_stack: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "operations", "hand-over", "--spoke", "spoke-1",
         "--from-stack", world.a.stack, "--to-stack", to_stack,
         "--backup-dir", str(world.tmp / "backups-again")],
        cwd=REPO, env=world.a.env, capture_output=True, text=True, timeout=300)


def test_a_hand_over_from_a_stack_that_does_not_own_the_spoke_is_refused(
        world: World) -> None:
    api = spoke_api(world.lab)
    before = managed_versions(api)
    state_a, state_b = world.a.export(), world.b.export()
    world.a.configure(SPOKE_1)  # A names the spoke in its config, not in its state
    c = FleetStack(world.lab, f"t-own-c-{uuid.uuid4().hex[:6]}", world.state, RELEASED)
    c.init()
    try:
        # Run again, the move A -> B is done already: nothing to do, and it says so.
        proc = hand_over(world, world.b.stack)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "its state holds nothing of spoke 'spoke-1'" in proc.stdout, proc.stdout
        # The record names B, not A: A cannot give the spoke away.
        proc = hand_over(world, c.stack)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "spoke 'spoke-1': its owner record names stack " in proc.stderr, proc.stderr
        assert f"not organization/knative-fleet/{world.a.stack};" in proc.stderr
        assert world.owner(world.b) in proc.stderr and "nothing was changed" in proc.stderr
    finally:
        world.a.configure([])
        c.remove()
        c.cleanup()
    assert managed_versions(api) == before
    assert recorded_owner(api) == world.owner(world.b)
    assert world.a.export()["deployment"] == state_a["deployment"]
    assert world.b.export()["deployment"] == state_b["deployment"]


def test_a_spoke_the_knative_operator_runs_is_refused(world: World, lab: Lab) -> None:
    api = spoke_api(lab, 1)
    operator = KnativeOperator(lab.spokes[1], lab.bin, world.tmp / "operator.log")
    namespace = f"op-{uuid.uuid4().hex[:6]}"
    objs = client.CustomObjectsApi(api)
    core = client.CoreV1Api(api)
    try:
        operator.install_crds(api)
        create_if_absent(core.create_namespace, {"metadata": {"name": namespace}})
        objs.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS["KnativeServing"],
                                             cr("KnativeServing", namespace, {}, "serving"))
        before = managed_versions(api)
        world.b.configure([*SPOKE_1, entry("spoke-2", eventing=None)])
        for res in (world.b.preview(), world.b.up()):
            assert not res.ok, res.out
            assert "spoke 'spoke-2': KnativeOperatorActive" in res.out, res.out
            assert f"KnativeServing {namespace}/serving" in res.out, res.out
            assert "Taking over a spoke the Knative Operator runs" in res.out, res.out
        assert managed_versions(api) == before
    finally:
        world.b.configure(SPOKE_1)
        delete_if_present(objs.delete_namespaced_custom_object, GROUP, VERSION, namespace,
                          PLURALS["KnativeServing"], "serving")
        delete_namespaces(api, [namespace])
        remove_operator(api)


def write_record(api: client.ApiClient, owner: str, owner_id: str) -> None:
    """The owner record on the install's anchor, patched as another stack's hand-over
    writes it."""
    client.CoreV1Api(api).patch_namespaced_config_map(
        ANCHOR[1], ANCHOR[0], {"metadata": {"annotations": {OWNER: owner, OWNER_ID: owner_id}}},
        field_manager="knative-fleet-hand-over")


def spoke_resources(stack: FleetStack) -> list[str]:
    return sorted(r["urn"] for r in stack.export()["deployment"].get("resources") or []
                  if "::spoke-1" in r["urn"])


def assert_refused_at_the_guard(world: World, res: Result, before: dict,
                                held: list[str]) -> None:
    """The run failed at the owner guard naming A, and deleted nothing of spoke-1: not
    on the spoke, not in B's state."""
    owner_a = f"{world.owner(world.a)} (owner id {world.owner_id(world.a)})"
    assert not res.ok, res.out
    assert f"spoke 'spoke-1': stack '{owner_a}' manages this spoke now" in res.out, res.out
    assert "nothing on the spoke was deleted" in res.out, res.out
    assert "pulumi state delete --target-dependents 'urn:pulumi:" in res.out, res.out
    assert managed_versions(spoke_api(world.lab)) == before
    assert spoke_resources(world.b) == held


def test_a_destroy_is_refused_while_another_stacks_record_is_on_the_spoke(
        world: World) -> None:
    api = spoke_api(world.lab)
    assert recorded_owner(api) == world.owner(world.b)
    held = spoke_resources(world.b)
    assert any(":owner-record" in urn for urn in held), held
    write_record(api, world.owner(world.a), world.owner_id(world.a))
    before = managed_versions(api)
    assert len(before) > 50, len(before)

    assert_refused_at_the_guard(world, world.b.destroy(), before, held)


def test_an_up_that_drops_the_spoke_is_refused_the_same_way(world: World) -> None:
    api = spoke_api(world.lab)
    assert recorded_owner(api) == world.owner(world.a)
    held = spoke_resources(world.b)
    before = managed_versions(api)
    world.b.configure([])
    try:
        assert_refused_at_the_guard(world, world.b.up(), before, held)
    finally:
        world.b.configure(SPOKE_1)


def test_with_its_own_record_back_the_destroy_removes_the_install(world: World) -> None:
    api = spoke_api(world.lab)
    write_record(api, world.owner(world.b), world.owner_id(world.b))
    assert managed_versions(api)
    res = world.b.destroy()
    assert res.ok, res.why
    left = set(managed_versions(api))
    assert left <= kept_by_policy(left), sorted(left - kept_by_policy(left))[:20]
    assert spoke_resources(world.b) == []
