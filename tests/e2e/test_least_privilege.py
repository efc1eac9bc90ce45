"""knative-fleet with least-privilege identities instead of cluster-admin, on the lab's
RBAC-enforcing API servers: a spoke reached as a ServiceAccount bound to exactly the
ClusterRole `python -m operations rights` derives from the stack's plan installs, previews
without change and uninstalls; without one right it is refused with the verb, the
resource and the rule to add while the rest of the fleet converges and nothing on it
changes; a hub identity that may not list ClusterProfiles fails the run with its fix,
and the hub Role the same command prints is enough.

The tests share one lab setup and run in file order."""

from __future__ import annotations

import base64
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config, utils
from kubernetes.client.rest import ApiException

from config.fleet import parse_fleet_config
from operations.access_roles import hub_documents, subject
from lab import register
from lab.fleet import FleetStack, entry, fleet_config
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.paths import REPO
from tests.support.fleet import changed_spokes, deployments_available
from tests.support.snapshot import kept_by_policy, snapshot

pytestmark = pytest.mark.e2e
ACCOUNT = "knative-fleet-limited"
# Names of their own: the lab's spoke identity holds `knative-fleet-spoke`.
ROLE = "knative-fleet-limited"
HUB_ROLE = "knative-fleet-hub-reader"
PROFILE = "spoke-1-limited"
HUB_ACCOUNT = "knative-fleet-hub-reader"
TAKEN = ("apiextensions.k8s.io", "customresourcedefinitions", "patch")


def limited_fleet() -> list[dict]:
    return [entry("spoke-1", profile=PROFILE)]


def config_of(lab: Lab, fleet: list[dict], **overrides: object):
    raw = {k.split(":", 1)[1]: v for k, v in fleet_config(lab, fleet, **overrides).items()}
    return parse_fleet_config(raw)


def rights_command(config: Path) -> list[dict]:
    """`python -m operations rights` as a user runs it, on a stack file."""
    proc = subprocess.run([sys.executable, "-m", "fleet", "rights", "--config", str(config),
                           "--spoke-subject", f"ServiceAccount:kube-system/{ACCOUNT}",
                           "--only", "spoke", "--spoke-role", ROLE], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return list(yaml.safe_load_all(proc.stdout))


def apply(api: client.ApiClient, docs: list[dict]) -> None:
    """Creates each document, replacing one that exists."""
    for doc in docs:
        try:
            utils.create_from_dict(api, doc)
        except utils.FailToCreateError:
            rbac = client.RbacAuthorizationV1Api(api)
            name = doc["metadata"]["name"]
            if doc["kind"] == "ClusterRole":
                rbac.replace_cluster_role(name, doc)
            elif doc["kind"] == "Role":
                rbac.replace_namespaced_role(name, doc["metadata"]["namespace"], doc)


def hub_kubeconfig(lab: Lab, token: str, path: Path) -> Path:
    """A kubeconfig for the hub that authenticates with `token` alone."""
    admin = yaml.safe_load(Path(lab.hub.kubeconfig).read_text())
    cluster = {k: v for k, v in admin["clusters"][0]["cluster"].items()
               if k in ("server", "certificate-authority", "certificate-authority-data")}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "reader",
        "clusters": [{"name": "hub", "cluster": cluster}],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [{"name": "reader", "context": {"cluster": "hub", "user": "reader"}}]}))
    return path


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("least")
    s1, s2 = lab.spokes[0], lab.spokes[1]
    stack = FleetStack(lab, f"t-least-{uuid.uuid4().hex[:6]}", tmp / "state")
    stack_file = tmp / "Pulumi.limited.yaml"
    stack_file.write_text(yaml.safe_dump({"config": fleet_config(lab, limited_fleet())}))
    role_docs = rights_command(stack_file)
    rbac1 = client.RbacAuthorizationV1Api(s1.api())
    try:
        apply(s1.api(), role_docs)
        register.register_spoke(Path(lab.hub.kubeconfig), Path(s1.kubeconfig), PROFILE,
                                account=ACCOUNT, cluster_role=None)
        hub_token, _ = register.spoke_token(lab.hub.api(), HUB_ACCOUNT, cluster_role=None)
        stack.init()
        yield {"stack": stack, "s1": s1, "s2": s2, "role": role_docs[0], "tmp": tmp,
               "before": {s.name: snapshot(s.api()) for s in (s1, s2)},
               "hub_kubeconfig": hub_kubeconfig(lab, hub_token, tmp / "hub-reader.yaml")}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
        register.unregister_spoke(Path(lab.hub.kubeconfig), PROFILE)
        delete_if_present(lambda: rbac1.delete_cluster_role_binding(ROLE))
        delete_if_present(lambda: rbac1.delete_cluster_role(ROLE))
        for api in (s1.api(), lab.hub.api()):
            core = client.CoreV1Api(api)
            for name in (ACCOUNT, HUB_ACCOUNT):
                delete_if_present(lambda c=core, n=name: c.delete_namespaced_service_account(
                    n, register.SPOKE_SA_NAMESPACE))
                delete_if_present(lambda c=core, n=name: c.delete_namespaced_secret(
                    f"{n}-token", register.SPOKE_SA_NAMESPACE))
        hub_rbac = client.RbacAuthorizationV1Api(lab.hub.api())
        delete_if_present(lambda: hub_rbac.delete_namespaced_role_binding(
            HUB_ROLE, register.PROFILE_NAMESPACE))
        delete_if_present(lambda: hub_rbac.delete_namespaced_role(
            HUB_ROLE, register.PROFILE_NAMESPACE))


def limited_api(world: dict) -> client.ApiClient:
    """spoke-1 as the limited ServiceAccount."""
    core = client.CoreV1Api(world["s1"].api())
    secret = core.read_namespaced_secret(f"{ACCOUNT}-token", register.SPOKE_SA_NAMESPACE)
    cfg = client.Configuration()
    config.load_kube_config(config_file=world["s1"].kubeconfig, client_configuration=cfg)
    cfg.cert_file = cfg.key_file = None  # the admin's client certificate: not this identity
    cfg.api_key = {"authorization": "Bearer " + base64.b64decode(secret.data["token"]).decode()}
    return client.ApiClient(cfg)


def test_the_spoke_enforces_rbac_and_the_role_is_not_cluster_admin(world: dict) -> None:
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(limited_api(world)).list_node()
    assert err.value.status == 403
    rules = world["role"]["rules"]
    assert rules and not any("*" in r["verbs"] or "*" in r["resources"] for r in rules)
    groups = {g for r in rules for g in r["apiGroups"]}
    assert {"apiextensions.k8s.io", "apps", "rbac.authorization.k8s.io"} <= groups


def test_a_stack_installs_previews_and_uninstalls_with_exactly_the_derived_role(
        world: dict) -> None:
    stack: FleetStack = world["stack"]
    stack.configure(limited_fleet())
    res = stack.up()
    assert res.ok, res.out
    for namespace in ("knative-serving", "knative-eventing"):
        available = deployments_available(world["s1"].api(), namespace)
        assert available and all(available.values()), (namespace, available)
    res, steps = stack.preview_steps()
    assert res.ok and changed_spokes(steps) == {}, changed_spokes(steps)
    res = stack.destroy()
    assert res.ok, res.out
    after = snapshot(world["s1"].api())
    before = world["before"]["spoke-1"]
    assert after - before - kept_by_policy(after) == set()


def test_without_one_right_that_spoke_alone_is_refused_and_left_untouched(
        world: dict) -> None:
    stack: FleetStack = world["stack"]
    role = world["role"]
    group, resource, verb = TAKEN
    rules = []
    for rule in role["rules"]:
        if group in rule["apiGroups"] and resource in rule["resources"]:
            rules.append({**rule, "verbs": [v for v in rule["verbs"] if v != verb]})
        else:
            rules.append(rule)
    apply(world["s1"].api(), [{**role, "rules": rules}])
    try:
        before = snapshot(world["s1"].api())
        stack.configure([*limited_fleet(), entry("spoke-2")])
        res = stack.up()
        assert not res.ok, res.out
        assert "spoke 'spoke-1': SpokeAccessDenied: its identity may not " \
               f"{verb} {resource}.{group}" in res.out, res.out
        assert f"Add to its ClusterRole: apiGroups: ['{group}'], resources: [{resource}], " \
               f"verbs: [{verb}]" in res.out, res.out
        assert "python -m operations rights --stack <stack>" in res.out
        available = deployments_available(world["s2"].api(), "knative-serving")
        assert available and all(available.values()), available
        assert snapshot(world["s1"].api()) == before
    finally:
        apply(world["s1"].api(), [role])
    stack.configure([entry("spoke-2")])
    res = stack.destroy()
    assert res.ok, res.out


def test_a_hub_identity_without_the_hub_role_fails_with_its_fix_and_the_role_suffices(
        world: dict, lab: Lab) -> None:
    stack: FleetStack = world["stack"]
    group = {"name": "limited", "namespace": register.PROFILE_NAMESPACE,
             "selector": {"matchLabels": {"no-such-label": "x"}},
             "serving": {"version": "1.23"}}
    hub = {"kubeconfig": str(world["hub_kubeconfig"])}
    stack.configure([], groups=[group], hub=hub)
    res = stack.run("preview")
    assert not res.ok
    assert "cannot select the fleet's spokes: ClusterProfileUnavailable" in res.out, res.out
    assert "403" in res.out and "may get clusterprofiles" in res.out, res.out
    cfg = config_of(lab, [], groups=[group], hub=hub)
    apply(lab.hub.api(), hub_documents(
        cfg, subject(f"ServiceAccount:{register.SPOKE_SA_NAMESPACE}/{HUB_ACCOUNT}"), HUB_ROLE))
    res = stack.run("preview")
    assert res.ok, res.out
