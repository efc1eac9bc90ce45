"""The rights a stack's identities need, derived from its plan without reaching a
cluster, and the planner refusing a spoke whose identity lacks one."""

from __future__ import annotations

import pytest

from access import Reason, SpokeFacts
from config.fleet import parse_fleet_config
from config.identity import subject_of as subject
from fleet import plan_fleet
from fleet.rights import (
    RBAC_RESOURCES,
    Right,
    granted,
    missing_rights,
    plan_objects,
    plural,
    policy_rules,
)
from knative.secret_reads import READS
from lab.paths import RELEASES
from operations.access_roles import (
    hub_documents,
    spoke_documents,
    spoke_identity,
    spoke_rights,
    stack_plans,
)
from tests.support.factories import FakeInventory, two_spoke_fleet

ADMIN = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
RBAC = "rbac.authorization.k8s.io"


@pytest.mark.parametrize(("kind", "expected"), [
    ("Gateway", "gateways"), ("NetworkPolicy", "networkpolicies"), ("Ingress", "ingresses"),
    ("Endpoints", "endpoints"), ("Gateway", "gateways"), ("Key", "keys"),
    ("PodDisruptionBudget", "poddisruptionbudgets"),
])
def test_default_plurals(kind: str, expected: str) -> None:
    assert plural(kind) == expected


def test_the_spoke_role_covers_every_object_and_no_more() -> None:
    rights = spoke_rights(two_spoke_fleet())
    crds = "apiextensions.k8s.io", "customresourcedefinitions"
    assert Right(*crds, "patch", "services.serving.knative.dev") in rights
    assert Right("apps", "deployments", "watch") in rights
    assert Right("apps", "deployments", "patch", "controller") in rights
    assert Right("apps", "replicasets", "list") in rights  # the provider's Deployment await
    assert not {r for r in rights if r.resource == "replicasets" and r.verb == "patch"}
    # A kind the release's own CRDs define takes the CRD's plural.
    assert Right("caching.internal.knative.dev", "images", "patch", "queue-proxy") in rights
    # Knative's roles are created without holding their rules, on their names alone.
    assert {Right(RBAC, "clusterroles", v, "knative-serving-core")
            for v in ("escalate", "update", "patch", "delete")} <= rights
    assert Right(RBAC, "clusterroles", "bind", "knative-serving-admin") in rights
    assert not {r for r in rights if r.resource in ("nodes", "*") or r.verb == "*"}


def test_every_write_reaches_only_the_plans_names() -> None:
    """No create, update, patch or delete without a name, but the hold Lease's create
    (a POST names nothing; the admission policy holds it to its name)."""
    cfg = two_spoke_fleet()
    objects = plan_objects(stack_plans(cfg))
    rights = spoke_rights(cfg)
    writes = {r for r in rights if r.verb in ("create", "update", "patch", "delete")}
    assert {(r.resource, r.verb) for r in writes if not r.name} == {("leases", "create")}
    names = {o["metadata"]["name"] for o in objects} | {"knative-fleet-hold"}
    assert {r.name for r in writes if r.name} == names


def test_secrets_are_written_by_the_plans_names_only_and_read_in_no_namespace() -> None:
    """The cluster-wide role reads no Secret at all: reads come from the plan's bindings,
    one per install namespace that holds Secrets (knative.secret_reads)."""
    cfg = two_spoke_fleet()
    secrets = {r for r in spoke_rights(cfg) if r.resource == "secrets"}
    names = {o["metadata"]["name"] for o in plan_objects(stack_plans(cfg)) if o["kind"] == "Secret"}
    assert {r.name for r in secrets if r.verb == "patch"} == names
    assert {r.verb for r in secrets} == {"create", "update", "patch", "delete"}
    assert all(r.name for r in secrets)


def test_secret_reads_are_bound_in_each_install_namespace_to_the_stacks_identity() -> None:
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}", "spokeIdentity": "User:fleet-a",
        "fleet": [{"name": "a", "clusterProfileRef": {"name": "a", "namespace": "inv"},
                   "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}]})
    objects = plan_objects(stack_plans(cfg))
    reads = [o for o in objects if o["metadata"]["name"] == READS]
    assert sorted((o["kind"], o["metadata"]["namespace"]) for o in reads) == [
        ("Role", "knative-eventing"), ("Role", "knative-serving"),
        ("RoleBinding", "knative-eventing"), ("RoleBinding", "knative-serving")]
    for o in reads:
        if o["kind"] == "Role":
            assert o["rules"] == [{"apiGroups": [""], "resources": ["secrets"],
                                   "verbs": ["get", "list", "watch"]}]
        else:
            assert o["roleRef"] == {"apiGroup": RBAC, "kind": "Role", "name": READS}
            assert o["subjects"] == [{"kind": "User", "name": "fleet-a", "apiGroup": RBAC}]
    rights = spoke_rights(cfg)
    assert {Right(RBAC, "roles", v, READS) for v in ("escalate", "bind", "patch")} <= rights
    # Nothing in the printed file reads a Secret, or names the reads.
    docs = spoke_documents(cfg, subject("User:fleet-a"))
    assert not [r for d in docs if d["kind"] == "ClusterRole" for r in d["rules"]
                if "secrets" in r["resources"] and "get" in r["verbs"]]


def test_the_rights_are_printed_for_the_identity_the_plan_binds_reads_to() -> None:
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                              "spokeIdentity": "ServiceAccount:ops/fleet"})
    assert spoke_identity([cfg], None) == "ServiceAccount:ops/fleet"
    assert spoke_identity([cfg], "ServiceAccount:ops/fleet") == "ServiceAccount:ops/fleet"
    with pytest.raises(ValueError, match="set knative-fleet:spokeIdentity: User:other"):
        spoke_identity([cfg], "User:other")


def test_spokes_reached_as_another_identity_get_rights_of_their_own() -> None:
    """An entry (or group) reached through another access provider names its identity;
    the rights are printed per identity, each for its own spokes' specs."""
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}", "spokeIdentity": "User:eks",
        "fleet": [{"name": "a", "clusterProfileRef": {"name": "a", "namespace": "inv"},
                   "serving": {"version": "1.23"}},
                  {"name": "b", "clusterProfileRef": {"name": "b", "namespace": "inv"},
                   "spokeIdentity": "User:gke", "eventing": {"version": "1.23"}}]})
    with pytest.raises(ValueError, match="print the rights of each with --spoke-subject"):
        spoke_identity([cfg], None)
    reads = {o["metadata"]["namespace"]: o["subjects"][0]["name"]
             for o in plan_objects(stack_plans(cfg)) if o["kind"] == "RoleBinding"
             and o["metadata"]["name"] == READS}
    assert reads == {"knative-serving": "eks", "knative-eventing": "gke"}
    gke = spoke_documents(cfg, subject("User:gke"), identity="User:gke")
    role, _ = own(gke)
    written = {n for r in role["rules"] for n in r.get("resourceNames", [])}
    assert "eventing-controller" in written and "controller" not in written


def test_rbac_verbs_that_change_or_grant_a_role_reach_only_the_releases_names() -> None:
    cfg = two_spoke_fleet()
    plans = stack_plans(cfg)
    objects = plan_objects(plans)
    rights = spoke_rights(cfg)
    rbac = [r for r in rights if r.api_group == RBAC]
    assert rbac
    unnamed = {(r.resource, r.verb) for r in rbac if not r.name}
    assert unnamed == {(res, v) for res in RBAC_RESOURCES for v in ("get", "list", "watch")}
    names = {(plural(o["kind"]), o["metadata"]["name"]) for o in objects
             if o["apiVersion"].startswith(RBAC)}
    for verb in ("create", "update", "patch", "delete"):
        assert {(r.resource, r.name) for r in rbac if r.verb == verb} == names
    assert {(r.resource, r.name) for r in rbac if r.verb == "escalate"} == {
        (res, n) for res, n in names if res in ("clusterroles", "roles")}
    refs = {("clusterroles" if o["roleRef"]["kind"] == "ClusterRole" else "roles",
             o["roleRef"]["name"]) for o in objects if "roleRef" in o}
    assert {(r.resource, r.name) for r in rbac if r.verb == "bind"} == refs
    assert "cluster-admin" not in {r.name for r in rbac}


def own(docs: list[dict]) -> tuple[dict, dict]:
    """The identity's ClusterRole and its binding among the printed documents."""
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    (binding,) = [d for d in docs if d["kind"] == "ClusterRoleBinding"]
    return role, binding


def test_the_printed_role_has_no_wildcard_and_names_on_every_rbac_write() -> None:
    role, _ = own(spoke_documents(two_spoke_fleet(), subject("User:fleet")))
    for rule in role["rules"]:
        assert "*" not in rule["apiGroups"] + rule["resources"] + rule["verbs"], rule
        if RBAC in rule["apiGroups"] and set(rule["verbs"]) - {"get", "list", "watch"}:
            assert rule["resourceNames"], rule
    bind = [r for r in role["rules"] if "bind" in r["verbs"] or "escalate" in r["verbs"]]
    assert bind and all(r["resourceNames"] for r in bind)
    # No right on admission policies: the identity cannot loosen its own.
    admission = {res for r in role["rules"] for res in r["resources"]
                 if "admissionregistration.k8s.io" in r["apiGroups"]}
    assert admission == {"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}


def test_the_identitys_own_role_and_binding_are_not_among_the_releases_names() -> None:
    role, binding = own(spoke_documents(two_spoke_fleet(), subject("User:fleet")))
    named = {n for r in role["rules"] for n in r.get("resourceNames", [])}
    assert role["metadata"]["name"] not in named
    assert binding["metadata"]["name"] not in named
    with pytest.raises(ValueError, match="names a ClusterRole or ClusterRoleBinding"):
        spoke_documents(two_spoke_fleet(), subject("User:fleet"), "knative-serving-core")


def test_policy_rules_give_named_rights_their_resource_names() -> None:
    rules = policy_rules({Right(RBAC, "clusterroles", "escalate", "b"),
                          Right(RBAC, "clusterroles", "escalate", "a"),
                          Right(RBAC, "clusterroles", "delete", "a"),
                          Right(RBAC, "clusterroles", "delete", "b"),
                          Right(RBAC, "clusterroles", "bind", "a"),
                          Right(RBAC, "clusterroles", "get"),
                          Right(RBAC, "roles", "get"),
                          Right(RBAC, "roles", "get", "x")})
    assert rules == [
        {"apiGroups": [RBAC], "resources": ["clusterroles", "roles"], "verbs": ["get"]},
        {"apiGroups": [RBAC], "resources": ["clusterroles"], "resourceNames": ["a"],
         "verbs": ["bind"]},
        {"apiGroups": [RBAC], "resources": ["clusterroles"], "resourceNames": ["a", "b"],
         "verbs": ["delete", "escalate"]}]


def test_granted_honours_resource_names() -> None:
    rule = {"apiGroups": [RBAC], "resources": ["clusterroles"], "resourceNames": ["a"],
            "verbs": ["bind"]}
    assert granted(Right(RBAC, "clusterroles", "bind", "a"), [rule])
    assert not granted(Right(RBAC, "clusterroles", "bind", "cluster-admin"), [rule])
    assert not granted(Right(RBAC, "clusterroles", "bind"), [rule])  # every name
    assert granted(Right(RBAC, "clusterroles", "bind", "a"), ADMIN)


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
    role, binding = own(spoke_documents(cfg, subject("ServiceAccount:kube-system/fleet")))
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
    crds = "apiextensions.k8s.io", "customresourcedefinitions"
    rules = policy_rules({r for r in spoke_rights(cfg)
                          if (r.api_group, r.resource, r.verb) != (*crds, "patch")})
    limited = SpokeFacts(namespaces={}, installed={}, rules=rules)
    plan = plan_fleet(cfg, FakeInventory(facts={"a": limited,
                                                "b": SpokeFacts({}, {}, rules=ADMIN)}))
    refused = plan.spokes["spoke-a"]
    assert refused.install is None and refused.error is not None
    assert refused.error.reason is Reason.SPOKE_ACCESS_DENIED
    assert refused.error.message.startswith(
        "its identity may not patch customresourcedefinitions.apiextensions.k8s.io named ")
    assert "which this install needs; nothing on the spoke was changed. Add to its " \
        "ClusterRole: apiGroups: ['apiextensions.k8s.io'], resources: " \
        "[customresourcedefinitions], resourceNames: [" in refused.error.message
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


def test_a_spoke_whose_role_lacks_one_release_name_is_refused_with_that_name() -> None:
    """A role applied before the stack's specs grew (a new role in the release) holds
    `escalate` on the old names only: refused before anything changes."""
    cfg = two_spoke_fleet()
    taken = Right(RBAC, "clusterroles", "escalate", "knative-serving-core")
    rules = policy_rules(spoke_rights(cfg) - {taken})
    plan = plan_fleet(cfg, FakeInventory(facts={"a": SpokeFacts({}, {}, rules=rules)}))
    refused = plan.spokes["spoke-a"]
    assert refused.error is not None and refused.error.reason is Reason.SPOKE_ACCESS_DENIED
    assert refused.error.message.startswith(
        "its identity may not escalate clusterroles.rbac.authorization.k8s.io named "
        "knative-serving-core, which this install needs")
    assert "resources: [clusterroles], resourceNames: [knative-serving-core], " \
           "verbs: [escalate]" in refused.error.message


def test_a_crd_may_be_deleted_only_where_a_spec_deletes_crds_on_destroy() -> None:
    """Deleting a CRD deletes every custom resource of its kind: only a component whose
    spec sets deleteCrdsOnDestroy deletes its CRDs (its CRDs-first step), so only its
    CRD names get `delete`; the others are applied and changed, never deleted."""
    crds = "apiextensions.k8s.io", "customresourcedefinitions"

    def deletable(serving: dict) -> set[str]:
        cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": [
            {"name": "a", "clusterProfileRef": {"name": "a", "namespace": "f"},
             "serving": {"version": "1.23", **serving}, "eventing": {"version": "1.23"}}]})
        rights = spoke_rights(cfg)
        assert Right(*crds, "patch", "services.serving.knative.dev") in rights
        assert Right(*crds, "patch", "brokers.eventing.knative.dev") in rights
        return {r.name for r in rights if (r.api_group, r.resource, r.verb) == (*crds, "delete")}

    assert deletable({}) == set()
    serving_only = deletable({"deleteCrdsOnDestroy": True})
    assert "services.serving.knative.dev" in serving_only
    assert not any(name.endswith("eventing.knative.dev") for name in serving_only)
