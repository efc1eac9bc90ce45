"""One spoke, one stack, on the real runner CLI and the real program against the lab hub.

ClusterProfiles of this module's own hub namespace stand for the lab's spoke-1 and
spoke-2 (their status copied from fleet-system's): p-1 and p-1-alias are one cluster (one
inventory member id), p-2 another. Three stacks whose selections overlap (a group and an
explicit entry on p-2; the group's p-1 and another stack's p-1-alias) are refused by
`python -m runner` with exit 2 before any stack changes: no stack gets an update, no
object on the spokes changes. Once the overlap is gone the same stacks run. An
explicit-only stack naming p-1 and p-1-alias is refused by `pulumi preview` itself.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.paths import REPO
from lab.register import GROUP, PLURAL, PROFILE_NAMESPACE, VERSION
from lab.removal import delete_namespaces
from targeting.selection import MEMBER_ID_LABEL
from tests.support.snapshot import managed_versions

pytestmark = pytest.mark.lab
SPOKES = ("spoke-1", "spoke-2")


@dataclass
class World:
    lab: Lab
    namespace: str
    member: str  # the member id p-1 and p-1-alias share
    stacks: dict[str, FleetStack]  # "a", "b", "c"
    prefix: str
    before: dict[str, dict]  # spoke -> managed objects before any run

    def name(self, key: str) -> str:
        return self.stacks[key].stack


def _profile(hub: client.CustomObjectsApi, namespace: str, name: str, spoke: str,
             labels: dict[str, str]) -> None:
    """A ClusterProfile in `namespace` leading to the lab's `spoke`."""
    source = hub.get_namespaced_custom_object(GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, spoke)
    hub.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": source["spec"]})
    hub.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name,
                                              {"status": source["status"]})


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    uid = uuid.uuid4().hex[:6]
    namespace, member, prefix = f"t-overlap-{uid}", f"cluster-{uid}", f"t-ovl-{uid}-"
    api = lab.hub.api()
    hub = client.CustomObjectsApi(api)
    state = tmp_path_factory.mktemp("state")
    stacks = {key: FleetStack(lab, prefix + key, state) for key in ("a", "b", "c")}
    try:
        client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
        common = {"overlap-test": uid}
        _profile(hub, namespace, "p-1", "spoke-1", {**common, MEMBER_ID_LABEL: member})
        _profile(hub, namespace, "p-2", "spoke-2", common)
        _profile(hub, namespace, "p-1-alias", "spoke-1", {MEMBER_ID_LABEL: member})
        for stack in stacks.values():
            stack.init()  # every stack exists: "not changed" is an empty history
        before = {s: managed_versions(lab.spoke(s).api()) for s in SPOKES}
        yield World(lab, namespace, member, stacks, prefix, before)
    finally:
        for stack in stacks.values():
            stack.destroy()  # nothing to do unless a test failed midway
            stack.remove()
            stack.cleanup()
        for name in ("p-1", "p-2", "p-1-alias"):
            delete_if_present(hub.delete_namespaced_custom_object, GROUP, VERSION, namespace,
                              PLURAL, name)
        delete_namespaces(api, [namespace])


def group(world: World, selector: dict) -> dict:
    """A group over this module's namespace; no component, so a run only reaches it."""
    return {"name": "team", "namespace": world.namespace, "selector": selector}


def entry(world: World, name: str, profile: str) -> dict:
    return {"name": name, "clusterProfileRef": {"name": profile, "namespace": world.namespace}}


def configure_overlapping(world: World) -> None:
    uid = world.namespace.removeprefix("t-overlap-")
    world.stacks["a"].configure([], groups=[group(world, {"matchLabels": {"overlap-test": uid}})])
    world.stacks["b"].configure([entry(world, "two", "p-2")])
    world.stacks["c"].configure([entry(world, "one", "p-1-alias")], ring=2)


def runner(world: World, *args: str, stacks: str | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", *args, "--stacks", stacks or world.prefix + "*",
         "--parallel", "2"],
        cwd=REPO, env=world.stacks["a"].env, capture_output=True, text=True, timeout=900)


def assert_nothing_changed(world: World) -> None:
    for key, stack in world.stacks.items():
        assert stack.history() == [], key
    for spoke in SPOKES:
        assert managed_versions(world.lab.spoke(spoke).api()) == world.before[spoke], spoke


@pytest.mark.parametrize("args", [("up",), ("destroy",), ("preview", "--ring", "2"),
                                  ("up", "--shard", "2/2")])
def test_overlapping_stacks_are_refused_before_any_runs(world: World, tmp_path: Path,
                                                        args: tuple[str, ...]) -> None:
    configure_overlapping(world)
    logs = tmp_path / "logs"
    proc = runner(world, *args, "--log-dir", str(logs))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    a, b, c, ns = world.name("a"), world.name("b"), world.name("c"), world.namespace
    assert "python -m runner: refused: 2 spokes are selected by more than one stack" in err, err
    assert f"ClusterProfile {ns}/p-2: selected by stacks {a} and {b}" in err, err
    assert f"stack {b} selects it as spoke 'two' (fleet[0])" in err, err
    assert f"ClusterProfiles {ns}/p-1 and {ns}/p-1-alias, one cluster (the same " \
           f"{MEMBER_ID_LABEL}='{world.member}'): selected by stacks {a} and {c}" in err, err
    assert f"python -m operations hand-over --spoke two --from-stack {b} --to-stack {a}" in err, err
    assert "Nothing was run. Fix:" in err
    assert proc.stdout == ""  # not even the run's first line
    assert not logs.exists()
    assert_nothing_changed(world)


def test_stacks_that_no_longer_overlap_run(world: World) -> None:
    uid = world.namespace.removeprefix("t-overlap-")
    world.stacks["a"].configure([], groups=[group(world, {
        "matchLabels": {"overlap-test": uid},
        "matchExpressions": [{"key": MEMBER_ID_LABEL, "operator": "DoesNotExist"}]})])
    world.stacks["b"].configure([entry(world, "one", "p-1")])  # a now selects p-2 alone
    proc = runner(world, "preview", stacks=f"{world.name('a')},{world.name('b')}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "refused" not in proc.stdout + proc.stderr
    assert "preview: 2 succeeded" in proc.stdout, proc.stdout
    # The pattern is the fleet the check covers: c (p-1-alias) overlaps b's p-1.
    proc = runner(world, "preview")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"selected by stacks {world.name('b')} and {world.name('c')}" in proc.stderr


def test_an_explicit_only_stack_naming_one_cluster_twice_is_refused_by_preview(
        world: World) -> None:
    stack = world.stacks["a"]
    stack.configure([entry(world, "one", "p-1"), entry(world, "gone", "no-such-profile"),
                     entry(world, "again", "p-1-alias")])
    res = stack.preview()
    assert not res.ok, res.out
    ns = world.namespace
    assert f"fleet[2]: ClusterProfiles {ns}/p-1 (fleet[0]) and {ns}/p-1-alias carry the same " \
           f"{MEMBER_ID_LABEL}='{world.member}': they are the same cluster and would get " \
           "two installs; select only one of them: remove one of the two fleet entries" \
           in res.out, res.out
    assert "Traceback" not in res.out
    # Without the alias the missing profile fails its own spoke only, as always.
    stack.configure([entry(world, "one", "p-1"), entry(world, "gone", "no-such-profile")])
    res = stack.preview()
    assert not res.ok, res.out
    assert "spoke 'gone': ClusterProfileNotFound" in res.out, res.out
    assert "same cluster" not in res.out
    assert stack.history() == []
