"""The admission policy printed beside the spoke ClusterRole: matched to the spoke
identity alone, holding the names and bodies of the plan's own roles and bindings and
the namespaces the plan writes in. tests/e2e/test_least_privilege.py runs it on an API
server."""

from __future__ import annotations

import json
import re

import pytest

from config.fleet import parse_fleet_config
from fleet.rbac_policy import (
    cel,
    identity_condition,
    namespace_names,
    policy_documents,
    rbac_body,
    release_chunks,
    release_rbac,
    write_scopes,
)
from fleet.rights import OWN_OBJECTS, crd_plurals, plan_objects
from lab.paths import RELEASES
from operations.access_roles import spoke_documents, stack_plans, subject
from tests.support.factories import two_spoke_fleet

RBAC = "rbac.authorization.k8s.io"
SA = subject("ServiceAccount:kube-system/fleet")


def _variables(policy: dict) -> dict[str, str]:
    return {v["name"]: v["expression"] for v in policy["spec"]["variables"]}


def _release_keys(policy: dict) -> set[str]:
    """The keys of the policy's release map, from its parts."""
    text = " ".join(e for n, e in _variables(policy).items() if re.fullmatch(r"release\d+", n))
    return set(re.findall(r'"((?:Cluster)?Role(?:Binding)?/[^"]*)": ', text))


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


def test_the_policys_names_are_the_plans_roles_and_bindings() -> None:
    cfg = two_spoke_fleet()
    objects = plan_objects(stack_plans(cfg))
    policy = spoke_documents(cfg, SA)[0]
    rbac = {f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
            for o in objects if o["apiVersion"].startswith(RBAC)}
    assert "ClusterRole//knative-serving-core" in rbac
    assert "RoleBinding/knative-serving/knative-serving-activator" in rbac
    assert _release_keys(policy) == rbac
    role = spoke_documents(cfg, SA)[2]
    escalate = {n for r in role["rules"] if "escalate" in r["verbs"]
                for n in r["resourceNames"]}
    assert escalate == {k.rsplit("/", 1)[1] for k in rbac if k.split("/")[0].endswith("Role")}


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
    assert release_rbac([old, new, old]) == {"ClusterRole//r": [rbac_body(old),
                                                                rbac_body(new)]}


def test_an_upgrade_stack_admits_both_releases_roles() -> None:
    """1.22 and 1.23 of one stack: a role the two write differently has both bodies."""
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": [
        {"name": n, "clusterProfileRef": {"name": n, "namespace": "f"},
         "eventing": {"version": v}} for n, v in (("a", "1.22"), ("b", "1.23"))]})
    bodies = release_rbac(plan_objects(stack_plans(cfg)))
    changed = {k for k, b in bodies.items() if len(b) > 1}
    assert changed == {"ClusterRole//knative-eventing-controller",
                       "ClusterRole//imc-controller"}
    assert all(len(b) == 2 for k, b in bodies.items() if k in changed)


def test_writes_are_confined_to_the_namespaces_the_plan_uses() -> None:
    plans = stack_plans(two_spoke_fleet())
    objects = plan_objects(plans)
    scopes = write_scopes(objects, crd_plurals(plans))
    assert scopes["apps/deployments"] == ["knative-eventing", "knative-serving"]
    assert scopes["/secrets"] == ["knative-eventing", "knative-serving"]
    assert "kube-system" not in {ns for v in scopes.values() for ns in v}
    assert "rbac.authorization.k8s.io/clusterroles" not in scopes  # cluster-scoped
    assert namespace_names(objects) == ["knative-eventing", "knative-serving"]


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
    assert literal == '{"a\\"b": ["", "x\\\\y"], "n": [dyn(1), dyn(true)]}'
    assert cel([{"a": ["x"]}, {"b": []}]) == '[{"a": ["x"]}, {"b": []}]'
    assert cel({"roleRef": {"kind": "ClusterRole"}, "subjects": [{"kind": "User"}]}) == \
        '{"roleRef": dyn({"kind": "ClusterRole"}), "subjects": dyn([{"kind": "User"}])}'
    with pytest.raises(TypeError):
        cel(1.5)


def test_the_policy_stays_small() -> None:
    """A stack of two versions is far under the API server's request limit (3 MiB) and
    etcd's object limit (1.5 MiB); the lab's union of every version, ingress and source
    is about 80 kB."""
    policy = spoke_documents(two_spoke_fleet(), SA)[0]
    size = len(json.dumps(policy))
    assert size < 200_000, size
    assert all(len(e) < 100_000 for e in _variables(policy).values())


def test_the_release_map_is_split_under_the_cel_parsers_limit() -> None:
    release = {f"ClusterRole//r{i}": [{"rules": [{"verbs": ["get"] * 50}]}] for i in range(400)}
    chunks = release_chunks(release, limit=10_000)
    assert len(chunks) > 1 and all(len(cel(c)) <= 10_000 for c in chunks)
    assert {k: v for c in chunks for k, v in c.items()} == release
    policy = policy_documents("p", SA, [], {})[0]
    assert _variables(policy)["entries"] == (
        "variables.key in variables.release0 ? variables.release0[variables.key] : []")


def test_knative_fleets_own_objects_are_written_by_name_only() -> None:
    """The run's hold (a Lease in kube-system) is the one object outside the release's
    namespaces the policy admits, by its name."""
    docs = spoke_documents(two_spoke_fleet(), SA)
    own = json.loads(_variables(docs[0])["own"])
    assert own == ["/".join(o) for o in OWN_OBJECTS]
    held = {n for r in docs[2]["rules"] if "leases" in r["resources"]
            for n in r.get("resourceNames", ["*"])}
    assert held == {"*", "knative-fleet-hold"}  # create names nothing; the rest by name
