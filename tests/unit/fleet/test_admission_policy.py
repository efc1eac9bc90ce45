"""The admission policy printed beside the spoke ClusterRole: matched to the spoke
identity alone, holding every object of the plan by resource, namespace and name, and the
content the plan gives it. tests/e2e/test_least_privilege.py and
tests/e2e/test_identity_attacks.py run it on an API server."""

from __future__ import annotations

import json
import re

import pytest

from config.fleet import parse_fleet_config
from config.identity import subject_of as subject
from fleet.admission_policy import (
    entry_lookup,
    identity_condition,
    policy_documents,
    release_chunks,
)
from fleet.cel_literal import cel
from fleet.policy_entries import (
    anchor_names,
    container_shape,
    host_namespaces,
    plan_entries,
    rbac_body,
    service_ref,
    volume_source,
)
from fleet.rights import OWN_OBJECTS, crd_plurals, plan_objects
from lab.paths import RELEASES
from operations.access_roles import spoke_documents, stack_plans
from tests.support.factories import two_spoke_fleet

RBAC = "rbac.authorization.k8s.io"
SA = subject("ServiceAccount:kube-system/fleet")


def _variables(policy: dict) -> dict[str, str]:
    return {v["name"]: v["expression"] for v in policy["spec"]["variables"]}


def _entries(cfg=None) -> dict:
    plans = stack_plans(cfg or two_spoke_fleet())
    return plan_entries(plan_objects(plans), crd_plurals(plans))


def _release_keys(policy: dict) -> set[str]:
    """The keys of the policy's release map, from its parts."""
    text = " ".join(e for n, e in _variables(policy).items() if re.fullmatch(r"release\d+", n))
    return set(re.findall(r'"([a-z0-9.-]*/[a-z0-9]+/[a-z0-9-]*/[^"/]+)": ', text))


def test_the_spoke_documents_are_the_policy_its_binding_the_role_and_its_binding() -> None:
    docs = spoke_documents(two_spoke_fleet(), SA, "knative-fleet-prod")
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy",
                                         "ValidatingAdmissionPolicyBinding",
                                         "ClusterRole", "ClusterRoleBinding"]
    assert {d["metadata"]["name"] for d in docs} == {"knative-fleet-prod"}
    policy, binding = docs[:2]
    assert policy["apiVersion"] == binding["apiVersion"] == "admissionregistration.k8s.io/v1"
    assert binding["spec"] == {"policyName": "knative-fleet-prod",
                               "validationActions": ["Deny"]}
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConditions"] == [{
        "name": "fleet-identity",
        "expression": 'request.userInfo.username == "system:serviceaccount:kube-system:fleet"'}]
    assert all(v["reason"] == "Forbidden" for v in policy["spec"]["validations"])


def test_every_object_of_the_plan_is_a_key_and_nothing_else() -> None:
    """The plan's objects by group/resource/namespace/name, and knative-fleet's hold."""
    cfg = two_spoke_fleet()
    plans = stack_plans(cfg)
    plurals = crd_plurals(plans)
    keys = set(_entries(cfg))
    assert "apps/deployments/knative-serving/controller" in keys
    assert "/secrets/knative-serving/webhook-certs" in keys
    assert "/namespaces//knative-serving" in keys
    assert f"{RBAC}/clusterroles//knative-serving-core" in keys
    assert "apiextensions.k8s.io/customresourcedefinitions//services.serving.knative.dev" in keys
    assert "coordination.k8s.io/leases/kube-system/knative-fleet-hold" in keys
    assert not {k for k in keys if "/kube-system/" in k} - {
        "coordination.k8s.io/leases/kube-system/knative-fleet-hold"}
    assert len(keys) == len({(o["metadata"].get("namespace"), o["metadata"]["name"], o["kind"])
                             for o in plan_objects(plans)}) + len(OWN_OBJECTS)
    policy = spoke_documents(cfg, SA)[0]
    assert _release_keys(policy) == keys
    assert plurals  # the plan's own kinds take their CRD's plural


def test_each_entry_holds_what_grants_something() -> None:
    entries = _entries()
    controller = entries["apps/deployments/knative-serving/controller"]
    shapes = controller["containers"]["controller"]
    assert shapes and all(s["image"].startswith("gcr.io/knative-releases/") for s in shapes)
    assert controller["serviceAccounts"] == ["controller"]
    assert controller["podSecurity"] == [{}]
    assert controller["labels"]["app.kubernetes.io/name"] == ["knative-serving"]
    secret = entries["/secrets/knative-serving/webhook-certs"]
    assert secret["types"] == ["Opaque"] and secret["data"] == {}
    config = entries["/configmaps/knative-serving/config-deployment"]
    assert config["data"]["queue-sidecar-image"][0].startswith("gcr.io/knative-releases/")
    webhook = entries["admissionregistration.k8s.io/validatingwebhookconfigurations//"
                      "validation.webhook.serving.knative.dev"]
    assert webhook["webhooks"] == {"validation.webhook.serving.knative.dev":
                                   ["knative-serving/webhook:443"]}
    service = entries["/services/knative-serving/webhook"]
    assert service["serviceTypes"] == ["ClusterIP"] and service["externalNames"] == [""]
    assert service["selectors"] == [{"app": "webhook", "role": "webhook"}]
    crd = entries["apiextensions.k8s.io/customresourcedefinitions//pingsources.sources.knative.dev"]
    assert crd["conversions"] == ["knative-eventing/eventing-webhook:443"]
    crd = entries["apiextensions.k8s.io/customresourcedefinitions//services.serving.knative.dev"]
    assert crd["conversions"] == []
    anchor = entries["/configmaps/knative-serving/knativeserving-knative-serving-root-owner"]
    assert "knative-fleet.dev/owner-id" in anchor["freeAnnotations"]
    assert "freeAnnotations" not in controller
    assert entries["/namespaces//knative-serving"]["labels"]["kubernetes.io/metadata.name"] == \
        ["knative-serving"]


def test_the_anchors_are_the_only_owners_a_new_reference_may_name() -> None:
    plans = stack_plans(two_spoke_fleet())
    assert anchor_names(plan_objects(plans)) == [
        "knativeeventing-knative-eventing-root-owner",
        "knativeserving-knative-serving-root-owner"]


def test_the_projections_are_what_the_policys_cel_builds_from_a_live_object() -> None:
    assert service_ref({"namespace": "n", "name": "s"}) == "n/s:443"
    assert service_ref({"namespace": "n", "name": "s", "port": 8443, "path": "/x"}) == \
        "n/s:8443"  # the path is Knative's webhook's to write
    assert volume_source({"name": "v", "secret": {"secretName": "certs"}}) == "secret:certs"
    assert volume_source({"name": "v", "configMap": {"name": "c"}}) == "configMap:c"
    assert volume_source({"name": "v", "hostPath": {"path": "/"}}) == "other:"
    assert volume_source({"name": "v", "projected": {"sources": [
        {"serviceAccountToken": {"audience": "a"}}, {"secret": {"name": "s"}}]}}) == \
        "projected:token=a,secret=s"
    assert container_shape({"name": "c", "image": "i", "securityContext": {
        "capabilities": {"drop": ["ALL"]}, "runAsUser": None}}) == {
        "image": "i", "command": [], "args": [],
        "securityContext": {"capabilities": {"drop": ["ALL"]}}}


def test_the_release_bodies_are_what_the_api_server_stores() -> None:
    """Empty fields left out as the server does; User and Group subjects with the group
    the server defaults; an aggregated role by its aggregation rule alone."""
    role = {"kind": "ClusterRole", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "resourceNames": [],
                       "verbs": ["get"]}]}
    assert rbac_body(role) == {"rules": [{"apiGroups": [""], "resources": ["pods"],
                                          "verbs": ["get"]}]}
    aggregated = {"kind": "ClusterRole", "metadata": {"name": "a"},
                  "aggregationRule": {"clusterRoleSelectors": [
                      {"matchLabels": {"x": "true"}, "matchExpressions": []}]}}
    assert rbac_body(aggregated) == {
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "true"}}]}}
    binding = {"kind": "ClusterRoleBinding", "metadata": {"name": "b"},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "r"},
               "subjects": [{"kind": "ServiceAccount", "name": "c", "namespace": "n",
                             "apiGroup": ""}, {"kind": "User", "name": "u"}]}
    assert rbac_body(binding) == {
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "c", "namespace": "n"},
                     {"kind": "User", "name": "u", "apiGroup": RBAC}]}


def test_a_role_two_versions_write_differently_keeps_both_bodies() -> None:
    old = {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
           "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    new = {**old, "rules": [{"apiGroups": [""], "resources": ["pods"],
                             "verbs": ["get", "list"]}]}
    entries = plan_entries([old, new, old], {})
    assert entries[f"{RBAC}/clusterroles//r"]["rbac"] == [rbac_body(old), rbac_body(new)]


def test_an_upgrade_stack_admits_both_releases_roles_and_images() -> None:
    """1.22 and 1.23 of one stack: a role the two write differently has both bodies, a
    Deployment both images."""
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": [
        {"name": n, "clusterProfileRef": {"name": n, "namespace": "f"},
         "eventing": {"version": v}} for n, v in (("a", "1.22"), ("b", "1.23"))]})
    entries = _entries(cfg)
    changed = {k for k, e in entries.items() if len(e.get("rbac", [])) > 1}
    assert changed == {f"{RBAC}/clusterroles//knative-eventing-controller",
                       f"{RBAC}/clusterroles//imc-controller"}
    images = entries["apps/deployments/knative-eventing/eventing-controller"]["containers"]
    assert len(images["eventing-controller"]) == 2


@pytest.mark.parametrize(("who", "expected"), [
    ("ServiceAccount:kube-system/fleet",
     'request.userInfo.username == "system:serviceaccount:kube-system:fleet"'),
    ("User:ci", 'request.userInfo.username == "ci"'),
    ("Group:deployers",
     'has(request.userInfo.groups) && "deployers" in request.userInfo.groups'),
])
def test_the_policy_matches_the_identity_alone(who: str, expected: str) -> None:
    assert identity_condition(subject(who)) == expected


def test_cel_literals_escape_as_json_does_and_wrap_mixed_members_in_dyn() -> None:
    """Kubernetes' CEL takes a list or map literal only when its members' types agree."""
    literal = cel({"a\"b": ["", "x\\y"], "n": [1, True]})
    # list(string) and list(dyn) are not unified either: each member is wrapped.
    assert literal == '{"a\\"b": dyn(["", "x\\\\y"]), "n": dyn([dyn(1), dyn(true)])}'
    assert cel([{"a": ["x"]}, {"b": []}]) == '[{"a": ["x"]}, {"b": []}]'
    assert cel({"roleRef": {"kind": "ClusterRole"}, "subjects": [{"kind": "User"}]}) == \
        '{"roleRef": dyn({"kind": "ClusterRole"}), "subjects": dyn([{"kind": "User"}])}'
    with pytest.raises(TypeError):
        cel(1.5)


def test_the_policy_stays_under_the_api_servers_limits() -> None:
    """A stack of two versions is far under etcd's object limit (1.5 MiB); every
    expression under the CEL parser's 100,000 code points."""
    policy = spoke_documents(two_spoke_fleet(), SA)[0]
    size = len(json.dumps(policy))
    assert size < 400_000, size
    assert all(len(e) < 100_000 for e in _variables(policy).values())


def test_the_release_map_is_split_under_the_cel_parsers_limit() -> None:
    entries = {f"/configmaps/n/c{i:03}": {"data": {"k": ["v" * 50]}} for i in range(400)}
    chunks = release_chunks(entries, limit=10_000)
    assert len(chunks) > 1 and all(len(cel(c)) <= 10_000 for c in chunks)
    assert {k: v for c in chunks for k, v in c.items()} == entries


def test_a_request_builds_only_the_parts_of_its_resource() -> None:
    chunks = [{"/configmaps/n/a": {}}, {"/configmaps/n/b": {}, "apps/deployments/n/d": {}}]
    assert entry_lookup(chunks) == (
        'variables.resource == "/configmaps" ? (variables.key in variables.release0'
        " ? variables.release0[variables.key] : variables.key in variables.release1"
        " ? variables.release1[variables.key] : dyn({}))"
        ' : variables.resource == "apps/deployments" ? (variables.key in variables.release1'
        " ? variables.release1[variables.key] : dyn({})) : dyn({})")


def test_knative_fleets_own_objects_are_written_by_name_only() -> None:
    """The run's hold (a Lease in kube-system) is the one object outside the release's
    namespaces the policy admits, by its name, with its own labels."""
    docs = spoke_documents(two_spoke_fleet(), SA)
    hold = _entries()["coordination.k8s.io/leases/kube-system/knative-fleet-hold"]
    assert hold["labels"] == {"app.kubernetes.io/managed-by": ["knative-fleet"]}
    held = {n for r in docs[2]["rules"] if "leases" in r["resources"]
            for n in r.get("resourceNames", ["*"])}
    assert held == {"*", "knative-fleet-hold"}  # create names nothing; the rest by name
    assert policy_documents("p", SA, [], {})[0]["spec"]["validations"]


def test_host_namespaces_are_the_plans() -> None:
    """A pod shares the host's namespaces only where the plan says so (an operator spec's
    `hostNetwork` on a workload)."""
    assert host_namespaces({}) == "false/false/false"
    assert host_namespaces({"hostNetwork": True}) == "true/false/false"
    entries = _entries()
    assert entries["apps/deployments/knative-serving/controller"]["hosts"] == ["false/false/false"]
    policy = spoke_documents(two_spoke_fleet(), SA)[0]
    assert "in variables.entry.hosts" in _variables(policy)["podOk"]


def test_the_crd_nudge_is_free_only_on_a_crd_being_deleted() -> None:
    """The CRDs-first step's nudge (lifecycle.crds_first.delete_all) on a CRD of the plan
    whose deletion is under way, any value; on no other object, at no other time
    (tests/e2e/test_least_privilege.py tries it with no deletion under way)."""
    bad = _variables(spoke_documents(two_spoke_fleet(), SA)[0])["badAnnotations"]
    free = ('(variables.resource == "apiextensions.k8s.io/customresourcedefinitions"'
            " && has(object.metadata.deletionTimestamp)"
            ' ? ["knative-fleet.dev/finalizer-nudge"] : [])')
    assert free in bad
    assert bad.count("knative-fleet.dev/finalizer-nudge") == 1
