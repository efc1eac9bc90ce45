"""The rights a stack's identities need, derived from its plan without reaching a
cluster, and the planner refusing a spoke whose identity lacks one."""

from __future__ import annotations

import pytest

from access import Reason, SpokeFacts
from config.fleet import parse_fleet_config
from fleet import plan_fleet
from operations.access_roles import hub_documents, spoke_documents, spoke_rights, subject
from fleet.rights import Right, granted, missing_rights, plural, policy_rules
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, two_spoke_fleet

ADMIN = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]


@pytest.mark.parametrize(("kind", "expected"), [
    ("Gateway", "gateways"), ("NetworkPolicy", "networkpolicies"), ("Ingress", "ingresses"),
    ("Endpoints", "endpoints"), ("Gateway", "gateways"), ("Key", "keys"),
    ("PodDisruptionBudget", "poddisruptionbudgets"),
])
def test_default_plurals(kind: str, expected: str) -> None:
    assert plural(kind) == expected


def test_the_spoke_role_covers_every_object_and_no_more() -> None:
    rights = spoke_rights(two_spoke_fleet())
    assert Right("apiextensions.k8s.io", "customresourcedefinitions", "patch") in rights
    assert Right("apps", "deployments", "watch") in rights
    assert Right("apps", "replicasets", "list") in rights  # the provider's Deployment await
    assert Right("apps", "replicasets", "patch") not in rights
    # A kind the release's own CRDs define takes the CRD's plural.
    assert Right("caching.internal.knative.dev", "images", "patch") in rights
    # Knative's roles are created without holding their rules.
    assert {Right("rbac.authorization.k8s.io", "clusterroles", v)
            for v in ("bind", "escalate")} <= rights
    assert not {r for r in rights if r.resource in ("nodes", "*") or r.verb == "*"}


def test_policy_rules_group_resources_by_api_group_and_verbs() -> None:
    rules = policy_rules({Right("", "pods", "get"), Right("", "services", "get"),
                          Right("apps", "deployments", "get"), Right("", "pods", "list")})
    assert rules == [
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]


def test_granted_honours_wildcards() -> None:
    right = Right("apps", "deployments", "patch")
    assert granted(right, ADMIN)
    assert granted(right, [{"apiGroups": ["apps"], "resources": ["*"], "verbs": ["patch"]}])
    assert not granted(right, [{"apiGroups": ["apps"], "resources": ["deployments"],
                                "verbs": ["get"]}])
    assert not granted(right, [{"apiGroups": [""], "resources": ["deployments"],
                                "verbs": ["*"]}])


def test_a_derived_role_grants_what_the_plan_needs() -> None:
    cfg = two_spoke_fleet()
    (role, binding) = spoke_documents(cfg, subject("ServiceAccount:kube-system/fleet"))
    assert missing_rights(spoke_rights(cfg), role["rules"]) == []
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "fleet",
                                    "namespace": "kube-system"}]


def test_the_hub_role_reads_cluster_profiles_in_each_inventory_namespace() -> None:
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": "a", "clusterProfileRef": {"name": "a", "namespace": "inv-1"}}],
        "groups": [{"name": "g", "namespace": "inv-2",
                    "selector": {"matchLabels": {"x": "y"}}}]})
    docs = hub_documents(cfg, subject("User:platform"))
    roles = [d for d in docs if d["kind"] == "Role"]
    assert [r["metadata"]["namespace"] for r in roles] == ["inv-1", "inv-2"]
    assert all(r["rules"] == [{"apiGroups": ["multicluster.x-k8s.io"],
                               "resources": ["clusterprofiles"], "verbs": ["get", "list"]}]
               for r in roles)


@pytest.mark.parametrize("text", ["ServiceAccount:nobody", "Robot:x", "User:"])
def test_a_bad_subject_says_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match="ServiceAccount:NAMESPACE/NAME"):
        subject(text)


def test_a_spoke_without_one_right_is_refused_with_the_rule_to_add() -> None:
    cfg = two_spoke_fleet()
    rules = policy_rules(spoke_rights(cfg) - {
        Right("apiextensions.k8s.io", "customresourcedefinitions", "patch")})
    limited = SpokeFacts(namespaces={}, installed={}, rules=rules)
    plan = plan_fleet(cfg, FakeInventory(facts={"a": limited,
                                                "b": SpokeFacts({}, {}, rules=ADMIN)}))
    refused = plan.spokes["spoke-a"]
    assert refused.install is None and refused.error is not None
    assert refused.error.reason is Reason.SPOKE_ACCESS_DENIED
    assert refused.error.message.startswith(
        "its identity may not patch customresourcedefinitions.apiextensions.k8s.io, which "
        "this install needs; nothing on the spoke was changed. Add to its ClusterRole: "
        "apiGroups: ['apiextensions.k8s.io'], resources: [customresourcedefinitions], "
        "verbs: [patch]")
    assert "python -m operations rights" in str(refused.error)
    assert plan.spokes["spoke-b"].install is not None
    assert "spoke-a (SpokeAccessDenied)" in plan.failure


def test_a_spoke_that_cannot_say_its_rules_is_not_refused() -> None:
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(
        facts={"a": SpokeFacts({}, {}, rules=None)}))
    assert plan.spokes["spoke-a"].install is not None


def test_the_pre_checks_reads_are_in_the_role() -> None:
    rights = spoke_rights(two_spoke_fleet())
    assert {Right("operator.knative.dev", "knativeservings", "list"),
            Right("operator.knative.dev", "knativeeventings", "list"),
            Right("", "configmaps", "get")} <= rights
    # Reading the operator's CRs is all it may do with them.
    assert {r.verb for r in rights if r.api_group == "operator.knative.dev"} == {"list"}


def test_a_spoke_whose_identity_may_not_list_the_operator_crs_is_refused() -> None:
    cfg = two_spoke_fleet()
    rules = policy_rules(spoke_rights(cfg) - {
        Right("operator.knative.dev", "knativeeventings", "list")})
    plan = plan_fleet(cfg, FakeInventory(facts={"a": SpokeFacts({}, {}, rules=rules)}))
    refused = plan.spokes["spoke-a"]
    assert refused.error is not None and refused.error.reason is Reason.SPOKE_ACCESS_DENIED
    assert refused.error.message.startswith(
        "its identity may not list knativeeventings.operator.knative.dev")
