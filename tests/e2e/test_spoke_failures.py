"""Every resolution failure on the lab, with the broken spoke already installed:
its objects stay byte-for-byte (resourceVersion) unchanged, a change made to the
healthy spoke in the same run lands, the run fails naming the spoke, the reason
and the fix, and the preview shows no delete or replace for the broken spoke.
Also: no secret reaches the state, Pulumi's logs or the output."""

from __future__ import annotations

import base64
import json
import stat
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from tests.support.fleet import changed_spokes, spoke_in_state
from tests.support.snapshot import managed_versions

pytestmark = pytest.mark.e2e
GROUP, VERSION, PLURAL, NS = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles", "fleet-system"
BROKEN = "spoke-2"


@dataclass
class World:
    lab: Lab
    stack: FleetStack
    providers: Path
    outputs: list[str]


def profile_api(lab: Lab) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(lab.hub.api())


def get_status(lab: Lab, name: str) -> dict:
    return profile_api(lab).get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)["status"]


def put_status(lab: Lab, name: str, status: dict) -> None:
    api = profile_api(lab)
    obj = api.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    obj["status"] = status
    api.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, name, obj)


def fleet(marker: str, broken_ref: str = BROKEN) -> list[dict]:
    """Eventing on both spokes; spoke-1 gets a config change (`marker`) each run."""
    healthy = entry("spoke-1", serving=None)
    healthy["eventing"]["config"] = {"logging": {"knative-fleet-test": marker}}
    broken = entry(BROKEN, profile=broken_ref, serving=None)
    return [healthy, broken]


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("failures")
    hang = tmp / "hanging-plugin"
    hang.write_text("#!/bin/sh\nsleep 600\n")
    hang.chmod(hang.stat().st_mode | stat.S_IEXEC)
    providers = json.loads(Path(lab.provider_file).read_text())
    base = providers["providers"][0]
    providers["providers"] += [
        {**base, "name": "missing-plugin",
         "execConfig": {**base["execConfig"], "command": str(tmp / "no-such-plugin")}},
        {**base, "name": "hanging-plugin",
         "execConfig": {**base["execConfig"], "command": str(hang)}},
    ]
    provider_file = tmp / "providers.json"
    provider_file.write_text(json.dumps(providers))
    stack = FleetStack(lab, f"t-fail-{uuid.uuid4().hex[:6]}", tmp / "state")
    stack.init()
    w = World(lab, stack, provider_file, [])
    try:
        stack.configure(fleet("install"), providerFile=str(provider_file),
                        pluginTimeoutSeconds=3)
        res = stack.up()
        w.outputs.append(res.out)
        assert res.ok, res.why
        yield w
    finally:
        stack.configure(fleet("teardown"), providerFile=str(provider_file))
        stack.destroy()
        stack.remove()
        stack.cleanup()


def hub_token_secret(lab: Lab) -> tuple[client.CoreV1Api, client.V1Secret]:
    core = client.CoreV1Api(lab.hub.api())
    return core, core.read_namespaced_secret(BROKEN, "default")


def _with_status(mutate: Callable[[dict], None]) -> Callable[[Lab], Callable[[], None]]:
    def breaker(lab: Lab) -> Callable[[], None]:
        original = get_status(lab, BROKEN)
        changed = json.loads(json.dumps(original))
        mutate(changed)
        put_status(lab, BROKEN, changed)
        return lambda: put_status(lab, BROKEN, original)
    return breaker


def _cluster(status: dict) -> dict:
    return status["accessProviders"][0]["cluster"]


def _delete_hub_secret(lab: Lab) -> Callable[[], None]:
    core, secret = hub_token_secret(lab)
    core.delete_namespaced_secret(BROKEN, "default")
    body = {"metadata": {"name": BROKEN}, "type": secret.type, "data": secret.data}
    return lambda: core.create_namespaced_secret("default", body)


def _hub_ca() -> Callable[[dict], None]:
    def mutate(status: dict) -> None:
        hub = yaml.safe_load(Path(LAB_HUB[0]).read_text())["clusters"][0]["cluster"]
        ca = hub.get("certificate-authority-data") or base64.b64encode(
            Path(hub["certificate-authority"]).read_bytes()).decode()
        _cluster(status)["certificate-authority-data"] = ca  # the hub's CA, not the spoke's
    return mutate


LAB_HUB: list[str] = []


@dataclass
class Case:
    id: str
    reason: str
    breaker: Callable[[Lab], Callable[[], None]] | None = None
    broken_ref: str = BROKEN
    overrides: dict | None = None
    everyone: bool = False  # the fault breaks every spoke (hub or provider file)
    needle: str = ""


def _cond(status: str) -> Callable[[dict], None]:
    def mutate(s: dict) -> None:
        s["conditions"] = [{**s["conditions"][0], "status": status}]
    return mutate


CASES = [
    Case("not-found", "ClusterProfileNotFound", broken_ref="no-such-profile"),
    Case("not-ready-false", "ClusterProfileNotReady", _with_status(_cond("False"))),
    Case("not-ready-missing", "ClusterProfileNotReady",
         _with_status(lambda s: s.update(conditions=[]))),
    Case("hub-unreachable", "ClusterProfileUnavailable", everyone=True,
         overrides={"hub": {"kubeconfig": "UNREACHABLE"}}),
    Case("no-provider-file", "MulticlusterDisabled", everyone=True,
         overrides={"providerFile": None}),
    Case("no-provider-match", "AccessProviderFailed", _with_status(
        lambda s: s["accessProviders"][0].update(name="unknown-provider")),
         needle="unknown-provider"),
    Case("plugin-fails", "AccessProviderFailed", _delete_hub_secret,
         needle="failed to get secret"),
    Case("plugin-missing", "AccessProviderFailed", _with_status(
        lambda s: s["accessProviders"][0].update(name="missing-plugin")), needle="no-such-plugin"),
    Case("plugin-hangs", "AccessProviderFailed", _with_status(
        lambda s: s["accessProviders"][0].update(name="hanging-plugin")), needle="timed out"),
    Case("wrong-ca", "RemoteClientCreationFailed", _with_status(_hub_ca())),
    Case("not-listening", "RemoteClientCreationFailed", _with_status(
        lambda s: _cluster(s).update(server="https://127.0.0.1:1"))),
]


def unreachable_hub(tmp: Path, lab: Lab) -> str:
    cfg = yaml.safe_load(Path(lab.hub.kubeconfig).read_text())
    cfg["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    path = tmp / "unreachable-hub.kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_broken_spoke_is_left_alone(world: World, case: Case, tmp_path: Path) -> None:
    lab, stack = world.lab, world.stack
    LAB_HUB[:] = [lab.hub.kubeconfig]
    spoke1 = client.CoreV1Api(lab.spokes[0].api())
    broken_api = lab.spoke(BROKEN).api()
    before = managed_versions(broken_api)
    in_state = spoke_in_state(stack.export(), BROKEN)
    assert len(in_state) > 20, sorted(in_state)
    healthy_before = managed_versions(lab.spokes[0].api()) if case.everyone else None
    overrides: dict = {"providerFile": str(world.providers), "pluginTimeoutSeconds": 3}
    for key, value in (case.overrides or {}).items():
        overrides[key] = ({"kubeconfig": unreachable_hub(tmp_path, lab)}
                          if key == "hub" else value)
    repair = case.breaker(lab) if case.breaker else (lambda: None)
    try:
        stack.configure(fleet(case.id, case.broken_ref), **overrides)
        res = stack.up()
        world.outputs.append(res.out)
        assert not res.ok, res.out
        assert f"spoke '{BROKEN}'" in res.out and case.reason in res.out, res.out
        assert "Fix:" in res.out
        assert case.needle in res.out, res.out
        assert "Traceback" not in res.out
        if case.everyone:
            assert "spoke 'spoke-1'" in res.out
            assert managed_versions(lab.spokes[0].api()) == healthy_before
        else:
            data = spoke1.read_namespaced_config_map("config-logging", "knative-eventing").data
            assert data["knative-fleet-test"] == case.id
        assert managed_versions(broken_api) == before
        # ... and in the state: every resource of the spoke still recorded, as it was.
        assert spoke_in_state(stack.export(), BROKEN) == in_state
        prev, steps = stack.preview_steps()
        world.outputs.append(prev.out)
        ops = changed_spokes(steps).get(BROKEN, set())
        assert not ops & {"delete", "replace", "create-replacement", "delete-replaced"}, ops
    finally:
        repair()
    stack.configure(fleet(f"{case.id}-repaired"), providerFile=str(world.providers))
    res = stack.up()
    world.outputs.append(res.out)
    assert res.ok, res.why
    assert managed_versions(broken_api) == before


def test_no_secret_in_state_logs_or_output(world: World, tmp_path: Path) -> None:
    lab, stack = world.lab, world.stack
    secrets: set[str] = set()
    for spoke in lab.spokes:
        core = client.CoreV1Api(spoke.api())
        tok = core.read_namespaced_secret("knative-fleet-spoke-token", "kube-system").data
        secrets.add(base64.b64decode(tok["token"]).decode())
    hub = client.CoreV1Api(lab.hub.api())
    for spoke in lab.spokes:
        secrets.add(base64.b64decode(
            hub.read_namespaced_secret(spoke.name, "default").data["token"]).decode())
    del tmp_path
    stack.configure(fleet("secrets"), providerFile=str(world.providers))
    # Engine, language host and provider logs at the highest verbosity, on stderr.
    res = stack.run("up", "--yes", "--skip-preview", "-v=9", "--logflow", "--logtostderr")
    assert res.ok, res.why[-6000:]
    state = json.dumps(stack.export())
    logs = res.out
    assert "RegisterResource" in logs or "I1" in logs, "no verbose Pulumi logs captured"
    haystacks = {"state": state, "logs": logs, "output": "\n".join(world.outputs)}
    for where, text in haystacks.items():
        for secret in secrets:
            assert secret not in text, f"a spoke token appears in the {where}"


def test_way_out_for_a_permanently_gone_spoke(world: World) -> None:
    """The operator's "remove the finalizer by hand" is `pulumi state delete` of the
    spoke's component with its dependents: the stack forgets the spoke, touches no
    other, and converges; the gone spoke's objects are left behind (as the operator's)."""
    lab, stack = world.lab, world.stack
    healthy_before = managed_versions(lab.spokes[0].api())
    repair = _delete_hub_secret(lab)  # the spoke's credential is gone for good
    try:
        stack.configure([fleet("gone")[0]], providerFile=str(world.providers))
        stuck = stack.up()
        assert not stuck.ok, "deleting a spoke that cannot be reached should fail, not hang"
        urn = f"urn:pulumi:{stack.stack}::knative-fleet::knative-fleet:index:Spoke::{BROKEN}"
        res = stack.run("state", "delete", urn, "--target-dependents", "--yes")
        assert res.ok, res.why
        res = stack.up()
        assert res.ok, res.why
        exported = json.dumps(stack.export())
        assert f"Spoke::{BROKEN}" not in exported
        assert f"::{BROKEN}:" not in exported
        assert managed_versions(lab.spokes[0].api()).keys() == healthy_before.keys()
    finally:
        repair()
        # Bring the spoke back under management so the module's destroy cleans it, also
        # when an assertion above failed: the next module starts from clean spokes.
        stack.configure(fleet("back"), providerFile=str(world.providers))
        back = stack.up()
    assert back.ok, back.why
