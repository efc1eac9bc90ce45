"""Faults a fleet survives: credential rotation, a new address and CA bundle for
the same spoke, a spoke API server killed in the middle of `pulumi up`,
`pulumi up` interrupted by SIGINT, and killed (SIGKILL) with Pulumi's default
checkpoints and with them skipped. Each time the next `up` converges, with no replaced
resource, no duplicate and no orphan."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from lab.clusters import answers
from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.stack import PARALLEL_DIFF, SKIP_CHECKPOINTS
from lab.wait import wait_for
from ownership.hold import LEASE_NAME, LEASE_NAMESPACE
from tests.support.fleet import changed_spokes, deployments_available, module_stack
from tests.support.snapshot import holds_left, kept_by_policy, managed_uids, snapshot
from tests.support.topology import topology_lock

pytestmark = pytest.mark.e2e
GROUP, VERSION, PLURAL, NS = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles", "fleet-system"
REPLACING = {"replace", "create-replacement", "delete-replaced"}


@pytest.fixture(scope="module")
def before(lab: Lab) -> dict[str, set[tuple[str, str, str]]]:
    """What each spoke holds before the fleet touches it."""
    return {spoke.name: snapshot(spoke.api()) for spoke in lab.spokes}


@pytest.fixture(scope="module")
def stack(lab: Lab, before: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetStack]:
    with module_stack(lab, "fault", tmp_path_factory.mktemp("state"),
                      [entry("spoke-1", serving=None), entry("spoke-2", serving=None)]) as st:
        yield st


def profiles(lab: Lab) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(lab.hub.api())


def assert_converged(stack: FleetStack) -> None:
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, changed_spokes(steps)


def secret_token(core: client.CoreV1Api, name: str) -> str | None:
    """The (base64) token the token controller wrote into Secret `name`, once it has."""
    return (core.read_namespaced_secret(name, "kube-system").data or {}).get("token")


def token_refused(kubeconfig: str, token_b64: str | None) -> bool:
    """Whether the spoke's apiserver now refuses the token (401), i.e. it is revoked."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    cfg.cert_file = cfg.key_file = None
    cfg.api_key = {"authorization": f"Bearer {base64.b64decode(token_b64 or '').decode()}"}
    try:
        client.CoreV1Api(client.ApiClient(cfg)).list_namespace(limit=1, _request_timeout=5)
    except ApiException as exc:
        return exc.status == 401
    return False


def test_token_rotation_replaces_nothing(lab: Lab, stack: FleetStack) -> None:
    spoke = client.CoreV1Api(lab.spokes[1].api())
    hub = client.CoreV1Api(lab.hub.api())
    name = f"knative-fleet-spoke-token-{uuid.uuid4().hex[:5]}"
    spoke.create_namespaced_secret("kube-system", {
        "metadata": {"name": name, "annotations": {
            "kubernetes.io/service-account.name": "knative-fleet-spoke"}},
        "type": "kubernetes.io/service-account-token"})
    token = wait_for(lambda: secret_token(spoke, name), timeout=60, what=f"a token in {name}")
    assert token
    hub.patch_namespaced_secret("spoke-2", "default", {"data": {"token": token}})
    old = secret_token(spoke, "knative-fleet-spoke-token")
    spoke.delete_namespaced_secret("knative-fleet-spoke-token", "kube-system")
    # The old token is revoked with its Secret.
    wait_for(lambda: token_refused(lab.spokes[1].kubeconfig, old), timeout=60,
             what="the old spoke token refused")
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {}, changed_spokes(steps)
    res = stack.run("up", "--yes", "--skip-preview", "--expect-no-changes")
    assert res.ok, res.why
    # Put the lab back the way it registers spokes: the original Secret name.
    spoke.create_namespaced_secret("kube-system", {
        "metadata": {"name": "knative-fleet-spoke-token", "annotations": {
            "kubernetes.io/service-account.name": "knative-fleet-spoke"}},
        "type": "kubernetes.io/service-account-token"})
    fresh = wait_for(lambda: secret_token(spoke, "knative-fleet-spoke-token"), timeout=60,
                     what="a token in knative-fleet-spoke-token")
    hub.patch_namespaced_secret("spoke-2", "default", {"data": {"token": fresh}})
    spoke.delete_namespaced_secret(name, "kube-system")


def test_new_address_and_ca_bundle_replace_nothing(lab: Lab, stack: FleetStack) -> None:
    api = profiles(lab)
    obj = api.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "spoke-2")
    original = json.loads(json.dumps(obj["status"]))
    cluster = obj["status"]["accessProviders"][0]["cluster"]
    cluster["server"] = cluster["server"].replace("127.0.0.1", "localhost")
    hub = yaml.safe_load(Path(lab.hub.kubeconfig).read_text())["clusters"][0]["cluster"]
    hub_ca = Path(hub["certificate-authority"]).read_bytes()
    bundle = base64.b64decode(cluster["certificate-authority-data"]) + b"\n" + hub_ca
    cluster["certificate-authority-data"] = base64.b64encode(bundle).decode()
    api.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "spoke-2", obj)
    try:
        res, steps = stack.preview_steps()
        assert res.ok, res.why
        ops = changed_spokes(steps).get("spoke-2", set())
        assert ops <= {"update"} and not ops & REPLACING, ops
        res = stack.up()
        assert res.ok, res.why
        assert stack.outputs()["spokes"]["spoke-2"]["server"].startswith("https://localhost:")
        assert_converged(stack)
    finally:
        obj = api.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "spoke-2")
        obj["status"] = original
        api.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "spoke-2", obj)
    res = stack.up()
    assert res.ok, res.why


def start_up(stack: FleetStack, env: dict[str, str] | None = None,
             quiet: bool = False) -> subprocess.Popen:
    """`pulumi up` of the stack in the background (`env`: the stack's own by default); its
    output piped to the test, or dropped (`quiet`) for a run that is killed unread."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    return subprocess.Popen(
        ["pulumi", "up", "--yes", "--skip-preview", "--stack", stack.stack, "--non-interactive"],
        cwd=stack.project_dir, env=stack.env if env is None else env, stdout=out,
        stderr=subprocess.DEVNULL if quiet else subprocess.STDOUT, text=True)


def wait_for_objects(api: client.ApiClient, namespace: str, timeout: float = 120) -> None:
    wait_for(lambda: deployments_available(api, namespace), timeout=timeout,
             what=f"Deployments in {namespace}")


def urns(stack: FleetStack) -> list[str]:
    return [r["urn"] for r in stack.export()["deployment"].get("resources", [])]


def test_spoke_apiserver_killed_mid_up(lab: Lab, stack: FleetStack,
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    kwok = lab.kwok()
    spoke = lab.spokes[1]
    stack.configure([entry("spoke-1", serving=None), entry("spoke-2")])
    proc = start_up(stack)
    try:
        wait_for_objects(spoke.api(), "knative-serving")
        # While the spoke is down its ports are free: no lab may create a cluster then.
        with topology_lock(tmp_path_factory):
            os.kill(kwok.pids(spoke.name)["kube-apiserver"], signal.SIGKILL)
            wait_for(lambda: not answers(spoke.kubeconfig), timeout=60,
                     what=f"{spoke.name}'s apiserver down")
            kwok.run("stop", "cluster", "--name", spoke.name)
            kwok.run("start", "cluster", "--name", spoke.name, "--wait", "3m")
        proc.communicate(timeout=900)  # it may finish or fail; the next up must converge
    finally:
        if proc.poll() is None:
            proc.kill()
    res = stack.up()
    assert res.ok, res.why
    found = urns(stack)
    assert len(found) == len(set(found)), "duplicate resources in the state"
    assert all(deployments_available(spoke.api(), "knative-serving").values())
    assert_converged(stack)


def test_up_interrupted_by_sigint(lab: Lab, stack: FleetStack) -> None:
    spoke = lab.spokes[0]
    stack.configure([entry("spoke-1"), entry("spoke-2")])
    proc = start_up(stack)
    try:
        wait_for_objects(spoke.api(), "knative-serving")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    res = stack.up()
    if not res.ok and ("pending" in res.out or "currently locked" in res.out):
        res = recover(stack)
    assert res.ok, res.why
    assert_recovered(stack, lab.spokes[0].api())


def checkpointed(stack: FleetStack) -> int:
    """How many resources the state a live run writes holds; 0 while it cannot be read:
    the file backend rewrites the state's `.attrs` companion in place, so a read that
    meets the write finds it empty (`failed to load checkpoint: EOF`)."""
    res = stack.run("stack", "export", "--show-secrets=false")
    return len(json.loads(res.out)["deployment"].get("resources") or []) if res.ok else 0


def recover(stack: FleetStack):  # noqa: ANN201 - lab.stack.Result
    """The documented recovery (docs/troubleshooting.md, "Interrupted runs"): cancel (on
    this file:// backend it deletes the stack's lock files), clear what the interrupted
    run left pending, and up again."""
    cancelled = stack.run("cancel", "--yes")
    assert cancelled.ok, cancelled.why
    cleared = stack.run("refresh", "--yes", "--clear-pending-creates")
    assert cleared.ok, cleared.why
    return stack.up()


def assert_recovered(stack: FleetStack, api: client.ApiClient) -> list[str]:
    """One resource per URN, Serving Available, a no-op preview; returns the URNs."""
    found = urns(stack)
    assert len(found) == len(set(found))
    assert all(deployments_available(api, "knative-serving").values())
    assert_converged(stack)
    return found


def kill_run(proc: subprocess.Popen) -> None:
    """SIGKILL to the run and every process it started (plugins run in groups of their
    own), as an OOM kill or a lost CI runner ends it."""
    tree = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=60)


def test_up_killed_with_pulumis_defaults_recovers_as_documented(
        lab: Lab, stack: FleetStack) -> None:
    """Pulumi as installed (checkpoints on, none of the README's opt-ins): `pulumi up`
    killed (SIGKILL, its plugins with it) mid-install leaves a state that holds what it
    had applied so far, and docs/troubleshooting.md's recovery converges."""
    spoke = lab.spokes[0]
    assert stack.destroy().ok
    stack.configure([entry("spoke-1"), entry("spoke-2")])
    defaults = {k: v for k, v in stack.env.items() if k not in (SKIP_CHECKPOINTS, PARALLEL_DIFF)}
    proc = start_up(stack, defaults, quiet=True)
    try:
        # Killed once its checkpoints hold part of the install, before it ends.
        wait_for(lambda: proc.poll() is not None or checkpointed(stack) >= 20, timeout=600,
                 what="the killed run's first checkpoints")
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        kill_run(proc)
    # The file backend's repair (docs/troubleshooting.md): a kill can cut the state file's
    # metadata companion to nothing; the state itself is whole.
    backend = Path(stack.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    for attrs in (backend / ".pulumi" / "stacks").rglob("*.json.attrs"):
        if attrs.stat().st_size == 0:
            attrs.unlink()
    kept = urns(stack)
    assert len(kept) >= 20, kept
    res = subprocess.run(
        ["pulumi", "up", "--yes", "--skip-preview", "--stack", stack.stack, "--non-interactive"],
        cwd=stack.project_dir, env=defaults, capture_output=True, text=True, timeout=1200)
    assert res.returncode != 0 and "locked" in (res.stdout + res.stderr), res.stdout[-2000:]
    res = recover(stack)
    assert res.ok, res.why
    assert set(kept) <= set(assert_recovered(stack, spoke.api()))


def installed_uids(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    """managed_uids without the run's hold Lease (a run deletes it when it ends)."""
    return {k: uid for k, uid in managed_uids(api).items()
            if k != ("coordination.k8s.io/Lease", LEASE_NAMESPACE, LEASE_NAME)}


def test_up_killed_with_checkpoints_skipped_is_adopted_by_the_next_up(
        lab: Lab, stack: FleetStack) -> None:
    """README, the opt-in `PULUMI_SKIP_CHECKPOINTS=true`: a killed run records nothing of
    what it applied, and the next `up` (after the recovery docs/troubleshooting.md gives for
    the lock) adopts it: every object the killed run created keeps its uid, one resource
    per URN, a no-op preview after."""
    spoke = lab.spokes[0]
    assert stack.destroy().ok
    assert SKIP_CHECKPOINTS in stack.env
    recorded = urns(stack)
    stack.configure([entry("spoke-1"), entry("spoke-2", serving=None)])
    proc = start_up(stack, quiet=True)
    try:
        # Killed once part of the install is on the spoke, before the run ends.
        wait_for(lambda: proc.poll() is not None or len(installed_uids(spoke.api())) >= 30,
                 timeout=600, interval=1, what="the killed run's first objects on the spoke")
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        kill_run(proc)
    applied = installed_uids(spoke.api())
    assert len(applied) >= 30, sorted(applied)
    assert urns(stack) == recorded, "the killed run recorded part of what it applied"
    res = recover(stack)
    assert res.ok, res.why
    assert_recovered(stack, spoke.api())
    after = installed_uids(spoke.api())
    renewed = sorted(k for k, uid in applied.items() if after.get(k) != uid)
    assert renewed == [], f"created anew or deleted instead of adopted: {renewed[:10]}"


def test_destroy_after_faults_leaves_no_orphans(
        lab: Lab, stack: FleetStack, before: dict) -> None:
    res = stack.destroy()
    assert res.ok, res.why
    # A hold the interrupted runs left was taken over by the next `up` of this stack and
    # deleted on its release: no spoke keeps a Lease kube-system/knative-fleet-hold.
    left = holds_left({spoke.name: spoke.api() for spoke in lab.spokes})
    assert left == {}, f"hold Lease kube-system/knative-fleet-hold left, by spoke: {left}"
    for spoke in lab.spokes:
        after = snapshot(spoke.api())
        leaked = after - before[spoke.name] - kept_by_policy(after)
        assert leaked == set(), (spoke.name, sorted(leaked)[:10])
