"""knative-fleet with least-privilege identities instead of cluster-admin, on the lab's
RBAC-enforcing API servers: a spoke reached as a ServiceAccount bound to exactly the
ClusterRole `python -m operations rights` derives from the stack's plan, and held by the
admission policy it prints beside it, installs, previews without change and uninstalls;
as that identity, binding cluster-admin to itself, writing `*` into a role of its own
making, into its own ClusterRole or into a Knative role, binding a Knative role to itself,
touching the policy, and writing outside the release's namespaces are each refused,
while the release's own role as the release writes it is admitted; without one right it
is refused with the verb, the resource and the rule to add while the rest of the fleet
converges and nothing on it changes; a hub identity that may not list ClusterProfiles
fails the run with its fix, and the hub Role the same command prints is enough.

The tests share one lab setup and run in file order."""

from __future__ import annotations

import base64
import json
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
from lab import register
from lab.fleet import FleetStack, entry, fleet_config
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.paths import REPO
from operations.access_roles import hub_documents, subject
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
RBAC = "rbac.authorization.k8s.io"
ME = {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": "kube-system"}
STAR = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
# A Knative role and binding the install holds, and a namespaced role name it ships.
KNATIVE_ROLE = "knative-serving-core"
KNATIVE_BINDING = "knative-serving-controller-admin"
KNATIVE_NAMESPACED_ROLE = "knative-serving-activator"


def limited_fleet() -> list[dict]:
    return [entry("spoke-1", profile=PROFILE)]


def config_of(lab: Lab, fleet: list[dict], **overrides: object):
    raw = {k.split(":", 1)[1]: v for k, v in fleet_config(lab, fleet, **overrides).items()}
    return parse_fleet_config(raw)


def rights_command(config: Path) -> list[dict]:
    """`python -m operations rights` as a user runs it, on a stack file."""
    proc = subprocess.run([sys.executable, "-m", "operations", "rights", "--config", str(config),
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
    admission1 = client.AdmissionregistrationV1Api(s1.api())
    kinds = {d["kind"]: d for d in role_docs}
    try:
        register.apply_rbac(s1.api(), role_docs)
        register.register_spoke(Path(lab.hub.kubeconfig), Path(s1.kubeconfig), PROFILE,
                                account=ACCOUNT, cluster_role=None)
        hub_token, _ = register.spoke_token(lab.hub.api(), HUB_ACCOUNT, cluster_role=None)
        stack.init()
        yield {"stack": stack, "s1": s1, "s2": s2, "role": kinds["ClusterRole"], "tmp": tmp,
               "policy": kinds["ValidatingAdmissionPolicy"],
               "before": {s.name: snapshot(s.api()) for s in (s1, s2)},
               "hub_kubeconfig": hub_kubeconfig(lab, hub_token, tmp / "hub-reader.yaml")}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
        register.unregister_spoke(Path(lab.hub.kubeconfig), PROFILE)
        delete_if_present(lambda: rbac1.delete_cluster_role_binding(ROLE))
        delete_if_present(lambda: rbac1.delete_cluster_role(ROLE))
        delete_if_present(lambda: admission1.delete_validating_admission_policy_binding(ROLE))
        delete_if_present(lambda: admission1.delete_validating_admission_policy(ROLE))
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


def test_a_stack_installs_and_previews_with_exactly_the_derived_role_and_policy(
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


def attempt(api: client.ApiClient, method: str, path: str, body: dict | None = None,
            apply: bool = False, dry_run: bool = False) -> tuple[int, str]:
    """One request as `api`'s identity: (HTTP status, response text). `apply`: a
    server-side apply by a field manager of the test's own, forced, as the provider's."""
    query = {"fieldManager": "escalation-attempt", "force": "true"} if apply else {}
    if dry_run:
        query["dryRun"] = "All"
    headers = {"Accept": "application/json"}
    if body is not None:  # a dict: JSON, which is YAML too for an apply
        headers["Content-Type"] = "application/apply-patch+yaml" if apply else "application/json"
    method, url, headers, sent, post = api.param_serialize(
        method=method, resource_path=path, query_params=list(query.items()),
        header_params=headers, body=body, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers, body=sent, post_params=post,
                            _request_timeout=30)
    response.read()
    return response.status, response.data.decode("utf-8", "replace")


def cluster_role(name: str, rules: list[dict]) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": rules}


def cluster_binding(name: str, role: str, subjects: list[dict]) -> dict:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
            "subjects": subjects}


def live(api: client.ApiClient, path: str) -> dict:
    status, text = attempt(api, "GET", path)
    assert status == 200, text
    return json.loads(text)


def test_the_identity_cannot_grant_itself_more_than_the_releases_roles(world: dict) -> None:
    """Each attempt as the limited identity, with the printed role and policy, while the
    release it installed is on the spoke: refused by RBAC (the verb on that name is not
    in the role) or by the policy (a name, body or namespace not the release's)."""
    me = limited_api(world)
    admin = world["s1"].api()
    crb, cr = f"/apis/{RBAC}/v1/clusterrolebindings", f"/apis/{RBAC}/v1/clusterroles"
    core_rules = live(admin, f"{cr}/{KNATIVE_ROLE}")["rules"]
    knative_binding = live(admin, f"{crb}/{KNATIVE_BINDING}")
    before = {p: live(admin, p) for p in (f"{cr}/{KNATIVE_ROLE}", f"{crb}/{KNATIVE_BINDING}",
                                          f"{cr}/{ROLE}", f"{crb}/{ROLE}")}
    refused_by_rbac = {
        "bind cluster-admin to itself": attempt(
            me, "POST", crb, cluster_binding("fleet-is-admin", "cluster-admin", [ME])),
        "bind cluster-admin to itself under a release binding's name (apply)": attempt(
            me, "PATCH", f"{crb}/eventing-webhook-resolver", cluster_binding(
                "eventing-webhook-resolver", "cluster-admin", [ME]), apply=True),
        "create a * ClusterRole": attempt(me, "POST", cr, cluster_role("fleet-star", STAR)),
        "create a * ClusterRole (apply)": attempt(
            me, "PATCH", f"{cr}/fleet-star", cluster_role("fleet-star", STAR), apply=True),
        "bind a * ClusterRole to itself": attempt(
            me, "POST", crb, cluster_binding("fleet-star", "fleet-star", [ME])),
        "add * to its own ClusterRole": attempt(
            me, "PATCH", f"{cr}/{ROLE}", cluster_role(ROLE, STAR), apply=True),
        "add * to its own ClusterRole (update)": attempt(
            me, "PUT", f"{cr}/{ROLE}", {**before[f"{cr}/{ROLE}"], "rules": STAR}),
        "rewrite its own binding": attempt(
            me, "PATCH", f"{crb}/{ROLE}", cluster_binding(ROLE, ROLE, [ME]), apply=True),
        "delete its own binding": attempt(me, "DELETE", f"{crb}/{ROLE}"),
        "delete the policy": attempt(
            me, "DELETE", f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/"
                          f"{ROLE}"),
        "delete the policy's binding": attempt(
            me, "DELETE", "/apis/admissionregistration.k8s.io/v1/"
                          f"validatingadmissionpolicybindings/{ROLE}"),
    }
    refused_by_policy = {
        "add * to a Knative role": attempt(
            me, "PATCH", f"{cr}/{KNATIVE_ROLE}",
            cluster_role(KNATIVE_ROLE, core_rules + STAR), apply=True),
        "bind a Knative role to itself": attempt(
            me, "PATCH", f"{crb}/{KNATIVE_BINDING}",
            cluster_binding(KNATIVE_BINDING, knative_binding["roleRef"]["name"],
                            knative_binding["subjects"] + [ME]), apply=True),
        "a * Role by a Knative role's name in kube-system": attempt(
            me, "PATCH", f"/apis/{RBAC}/v1/namespaces/kube-system/roles/"
                         f"{KNATIVE_NAMESPACED_ROLE}", {
                "apiVersion": f"{RBAC}/v1", "kind": "Role",
                "metadata": {"name": KNATIVE_NAMESPACED_ROLE, "namespace": "kube-system"},
                "rules": STAR}, apply=True),
        "a Deployment in kube-system": attempt(
            me, "POST", "/apis/apps/v1/namespaces/kube-system/deployments", {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "fleet-runs-as-kube-system"},
                "spec": {"selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "x"}},
                                      "spec": {"serviceAccountName": "default",
                                               "containers": [{"name": "x",
                                                               "image": "x"}]}}}}),
        "a token Secret in kube-system": attempt(
            me, "POST", "/api/v1/namespaces/kube-system/secrets", {
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "fleet-steals-a-token",
                             "annotations": {"kubernetes.io/service-account.name":
                                             "default"}},
                "type": "kubernetes.io/service-account-token"}),
    }
    for what, (status, text) in {**refused_by_rbac, **refused_by_policy}.items():
        print(f"{what}: {status} {json.loads(text).get('message', '')[:160]}")
    for what, (status, text) in refused_by_rbac.items():
        assert status == 403, (what, status, text)
        assert "ValidatingAdmissionPolicy" not in text, (what, text)
    for what, (status, text) in refused_by_policy.items():
        assert status == 403, (what, status, text)
        assert f"ValidatingAdmissionPolicy '{ROLE}'" in text, (what, text)
    after = {p: live(admin, p) for p in before}
    for path, obj in before.items():
        assert after[path]["metadata"]["resourceVersion"] == \
            obj["metadata"]["resourceVersion"], path
    # The release's own role, as the release writes it, is what the policy admits.
    status, text = attempt(me, "PATCH", f"{cr}/{KNATIVE_ROLE}",
                           cluster_role(KNATIVE_ROLE, core_rules), apply=True, dry_run=True)
    assert status == 200, text


def test_the_stack_uninstalls_with_them_and_leaves_nothing(world: dict) -> None:
    stack: FleetStack = world["stack"]
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
