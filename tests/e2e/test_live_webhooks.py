"""Knative's own webhooks judge the fleet on the lab (webhook admission on, the Pulumi CLI
and Kubernetes provider as released): Serving and Eventing installed on two spokes, the
webhooks fill their configurations and Secrets, and a no-op preview, the drift check, an
`up` and a drift repair all leave what the webhooks wrote as they wrote it; a config value
Knative refuses fails that spoke with Knative's words and nothing else changed there while
the other spoke's change lands; an upgrade 1.22 -> 1.23 meets the new webhooks; a destroy
with the webhooks live leaves nothing and sticks nowhere.

The module runs on the worker's lab, which the suite brings up with the webhooks (`python -m
lab up --webhooks`); from a lab without them it brings up one of its own beside it and takes
it down at its end. The tests share one stack in file order."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab, ensure_lab
from lab.paths import REPO
from lab.progress import summarize
from lab.wait import wait_for
from tests.support.fleet import deployments_available
from tests.support.snapshot import after_destroy, managed_versions, snapshot

pytestmark = pytest.mark.e2e
# The webhooks the lab runs Knative's commands for, by the Service their configurations name.
SERVICES = {("knative-serving", "webhook"), ("knative-eventing", "eventing-webhook")}
SECRETS = {"knative-serving": "webhook-certs", "knative-eventing": "eventing-webhook-certs"}
CERT_KEYS = {"ca-cert.pem", "server-cert.pem", "server-key.pem"}
TARGET = "container-concurrency-target-default"


@pytest.fixture(scope="module")
def webhook_lab(lab: Lab) -> Iterator[Lab]:
    """A hub and two spokes with Knative's webhooks and webhook admission on: the worker's
    lab when it runs them (the suite's mode), else a lab of its own beside it."""
    if lab.dir.webhooks_on:
        yield lab
        return
    root = lab.dir.root.with_name(f"{lab.dir.root.name}-webhooks")
    subprocess.run([sys.executable, "-m", "lab", "--dir", str(root), "up", "--webhooks"],
                   cwd=REPO, check=True)
    try:
        yield ensure_lab(root)
    finally:
        subprocess.run([sys.executable, "-m", "lab", "--dir", str(root), "down"], cwd=REPO,
                       check=False)


@pytest.fixture(scope="module")
def world(webhook_lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    lab = webhook_lab
    stack = FleetStack(lab, f"t-webhooks-{uuid.uuid4().hex[:6]}",
                       tmp_path_factory.mktemp("state"), binaries="released")
    spokes = lab.spokes[:2]
    before = {s.name: snapshot(s.api()) for s in spokes}
    stack.init()
    try:
        yield {"stack": stack, "spokes": spokes, "before": before,
               "out": tmp_path_factory.mktemp("drift")}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()


def fleet(version: str, targets: dict[str, str] | None = None) -> list[dict]:
    """Serving and Eventing on spoke-1 (CRDs deleted on destroy) and spoke-2 (CRDs kept),
    each with its autoscaler target when given."""
    out = []
    for name, delete_crds in (("spoke-1", True), ("spoke-2", False)):
        e = entry(name, serving=version, eventing=version)
        for component in ("serving", "eventing"):
            e[component]["deleteCrdsOnDestroy"] = delete_crds
        if targets and name in targets:
            e["serving"]["config"] = {"autoscaler": {TARGET: targets[name]}}
        out.append(e)
    return out


def digest(value: object) -> str:
    """A short digest: what the webhooks wrote holds a private key, never shown."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def webhook_writes(api: client.ApiClient) -> dict[str, tuple[str, int, bool]]:
    """What Knative's webhooks write into the objects the fleet applies: per webhook of a
    configuration that names a webhook the lab runs, (digest, rule count, has a CA); per
    certificate Secret, (digest, key count, has every certificate)."""
    adm = client.AdmissionregistrationV1Api(api)
    out: dict[str, tuple[str, int, bool]] = {}
    for kind, listing in (("validating", adm.list_validating_webhook_configuration),
                          ("mutating", adm.list_mutating_webhook_configuration)):
        for config in listing().items:
            for hook in config.webhooks or []:
                service = hook.client_config.service
                if service is None or (service.namespace, service.name) not in SERVICES:
                    continue
                rules = api.sanitize_for_serialization(hook.rules or [])
                out[f"{kind}/{config.metadata.name}/{hook.name}"] = (
                    digest([rules, hook.client_config.ca_bundle]), len(rules),
                    bool(hook.client_config.ca_bundle))
    core = client.CoreV1Api(api)
    for namespace, name in SECRETS.items():
        data = core.read_namespaced_secret(name, namespace).data or {}
        out[f"secret/{namespace}/{name}"] = (digest(data), len(data), CERT_KEYS <= set(data))
    return out


# Its rules follow the SinkBindings that exist: none, no rule.
RULES_FOLLOW_BINDINGS = "sinkbindings.webhook.sources.knative.dev"


def assert_filled(writes: dict[str, tuple[str, int, bool]]) -> None:
    unfilled = sorted(k for k, (_, count, filled) in writes.items()
                      if not filled or not (count or RULES_FOLLOW_BINDINGS in k))
    assert unfilled == [], unfilled
    assert sum(k.startswith(("validating/", "mutating/")) for k in writes) >= 7, sorted(writes)


def all_writes(world: dict) -> dict[str, dict[str, tuple[str, int, bool]]]:
    return {s.name: webhook_writes(s.api()) for s in world["spokes"]}


def drift(world: dict) -> tuple[int, str]:
    stack: FleetStack = world["stack"]
    proc = subprocess.run(
        [sys.executable, "-m", "drift", "--stack", stack.stack, "--out",
         str(world["out"] / uuid.uuid4().hex[:6])],
        cwd=REPO, env=stack.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def changes(stack: FleetStack) -> dict[str, int]:
    """The last update's resource changes, as Pulumi's history counts them."""
    return {op: n for op, n in (stack.history()[0].get("resourceChanges") or {}).items()
            if op != "same"}


def ready_webhooks(api: client.ApiClient) -> set[tuple[str, str]]:
    """(namespace, version) of each webhook pod that is Ready and not going."""
    pods = client.CoreV1Api(api).list_pod_for_all_namespaces(
        label_selector="role in (webhook,eventing-webhook)").items
    return {(p.metadata.namespace, p.metadata.labels["app.kubernetes.io/version"])
            for p in pods if p.metadata.deletion_timestamp is None
            and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])}


def test_install_on_two_spokes_and_the_webhooks_fill_what_they_own(world: dict) -> None:
    stack: FleetStack = world["stack"]
    stack.configure(fleet("1.22"))
    res = stack.up()
    assert res.ok, res.why
    for spoke in world["spokes"]:
        assert_filled(webhook_writes(spoke.api()))
        for namespace in SECRETS:
            available = deployments_available(spoke.api(), namespace)
            assert available and all(available.values()), (spoke.name, available)
    world["writes"] = all_writes(world)


def test_no_op_preview_drift_up_and_drift_repair_leave_the_webhooks_writes(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert [(s["op"], s["urn"]) for s in steps if s["op"] != "same"] == []
    code, printed = drift(world)
    assert code == 0, printed
    assert "no drift" in printed
    res = stack.up()
    assert res.ok, res.why
    assert changes(stack) == {}
    assert all_writes(world) == world["writes"]
    # `make drift-repair`: the refresh reads the webhooks' rules and CA, which stay theirs.
    res = stack.up("--refresh")
    assert res.ok, res.why
    assert changes(stack) == {}
    assert all_writes(world) == world["writes"]


def test_a_value_knative_refuses_fails_that_spoke_only(world: dict) -> None:
    stack: FleetStack = world["stack"]
    s1, s2 = world["spokes"]
    untouched = managed_versions(s1.api())
    stack.configure(fleet("1.22", {"spoke-1": "-5", "spoke-2": "90"}))
    res = stack.up("--continue-on-error")
    assert not res.ok, res.out
    shown = "\n".join(summarize(res.out.splitlines()))
    assert ("spoke-1: knative-serving/config-autoscaler refused by Knative's webhook "
            "config.webhook.serving.knative.dev: validation failed:") in shown, shown
    assert "spoke-2: knative-serving/config-autoscaler refused" not in shown
    assert managed_versions(s1.api()) == untouched
    autoscaler = client.CoreV1Api(s2.api()).read_namespaced_config_map(
        "config-autoscaler", "knative-serving").data
    assert autoscaler[TARGET] == "90"
    stack.configure(fleet("1.22", {"spoke-1": "80", "spoke-2": "90"}))
    res = stack.up("--continue-on-error")
    assert res.ok, res.why
    for spoke, value in ((s1, "80"), (s2, "90")):
        data = client.CoreV1Api(spoke.api()).read_namespaced_config_map(
            "config-autoscaler", "knative-serving").data
        assert data[TARGET] == value


def test_upgrade_to_1_23_meets_the_new_webhooks(world: dict) -> None:
    stack: FleetStack = world["stack"]
    stack.configure(fleet("1.23", {"spoke-1": "80", "spoke-2": "90"}))
    res = stack.up()
    assert res.ok, res.why
    for spoke in world["spokes"]:
        api = spoke.api()
        # The old pods go once the new ones are Ready, as their Deployments roll.
        wanted = {("knative-serving", "1.23.0"), ("knative-eventing", "1.23.0")}
        wait_for(lambda api=api, wanted=wanted: ready_webhooks(api) == wanted, timeout=180,
                 interval=1,
                 what=f"{spoke.name}: only the 1.23 webhook pods Ready")
        assert_filled(webhook_writes(api))
        # The 1.23 webhook answers and judges: a Knative Service it must refuse.
        with pytest.raises(client.ApiException) as refused:
            client.CustomObjectsApi(api).create_namespaced_custom_object(
                "serving.knative.dev", "v1", "default", "services", {
                    "apiVersion": "serving.knative.dev/v1", "kind": "Service",
                    "metadata": {"name": "refused"},
                    "spec": {"template": {"spec": {"containerConcurrency": -1, "containers": [
                        {"image": "example.com/hello"}]}}}})
        message = json.loads(refused.value.body or "{}").get("message", "")
        assert message.startswith('admission webhook "validation.webhook.serving.knative.dev" '
                                  "denied the request: validation failed: expected 0 <= -1 <= "
                                  "1000: spec.template.spec.containerConcurrency"), message
    # After the upgrade, nothing is replaced or deleted. (One run on this lab previewed an
    # update of spoke-2's 3scale-kourier-gateway Deployment here: docs/lab-webhooks.md.)
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert [(s["op"], s["urn"]) for s in steps
            if s["op"] not in ("same", "update")] == []


def test_destroy_with_the_webhooks_live_leaves_nothing(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res = stack.destroy()
    assert res.ok, res.why
    for spoke in world["spokes"]:
        after, leaked = after_destroy(spoke.api(), world["before"][spoke.name])
        assert leaked == set(), (spoke.name, sorted(leaked)[:20])
        hooks = {o for o in after if o[0].endswith("WebhookConfiguration")
                 and "knative" in o[2]}
        assert hooks == set(), (spoke.name, sorted(hooks))
    crds = {o[2] for o in snapshot(world["spokes"][0].api())
            if o[0] == "apiextensions.k8s.io/CustomResourceDefinition" and "knative" in o[2]}
    assert crds == set(), sorted(crds)[:10]
