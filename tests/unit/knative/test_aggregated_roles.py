"""The aggregated ClusterRoles of an install as plain data: who feeds whom, and the
rules the aggregation controller would write (kept in step with
`pkg/controller/clusterroleaggregation` of Kubernetes 1.36)."""

from __future__ import annotations

import pytest

from knative import plan as planning
from knative.aggregated_roles import (
    expected_rules,
    feeders_by_role,
    feeds,
    is_controller_recreation,
    selector_matches,
    selector_string,
    settled,
)
from models.component import EventingSpec, ServingSpec
from tests.support.releases import RELEASE_BASE


def role(name: str, labels: dict | None = None, rules: list | None = None,
         selectors: list | None = None) -> dict:
    obj: dict = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": name, "labels": labels or {}}, "rules": rules or []}
    if selectors is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return obj


R1 = {"apiGroups": ["a"], "resources": ["x"], "verbs": ["get"]}
R2 = {"apiGroups": ["b"], "resources": ["y"], "verbs": ["list"]}


@pytest.mark.parametrize(("selector", "labels", "match"), [
    ({"matchLabels": {"k": "v"}}, {"k": "v", "o": "1"}, True),
    ({"matchLabels": {"k": "v"}}, {"k": "w"}, False),
    ({"matchExpressions": [{"key": "k", "operator": "In", "values": ["v", "w"]}]}, {"k": "w"},
     True),
    ({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]}, {}, True),
    ({"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]}, {"k": "v"},
     False),
    ({"matchExpressions": [{"key": "k", "operator": "Exists"}]}, {"k": ""}, True),
    ({"matchExpressions": [{"key": "k", "operator": "DoesNotExist"}]}, {"k": ""}, False),
    ({}, {"any": "thing"}, True),
])
def test_selector_matches(selector: dict, labels: dict, match: bool) -> None:
    assert selector_matches(selector, labels) is match


def test_expected_rules_follow_the_controller() -> None:
    agg = role("agg", selectors=[{"matchLabels": {"f": "1"}}])
    feeders = [role("b", {"f": "1"}, [R2, R1]), role("a", {"f": "1"}, [R1]),
               role("c", {"f": "2"}, [{"verbs": ["*"]}]), agg]
    # by name: a's R1, then b's R2 (R1 once); c is not selected; agg never feeds itself
    assert expected_rules(agg, feeders) == [
        {"apiGroups": ["a"], "resources": ["x"], "resourceNames": [], "nonResourceURLs": [],
         "verbs": ["get"]},
        {"apiGroups": ["b"], "resources": ["y"], "resourceNames": [], "nonResourceURLs": [],
         "verbs": ["list"]},
    ]


def test_settled_once_the_live_role_holds_what_the_controller_computes() -> None:
    feeder = role("a", {"f": "1"}, [R1])
    live = role("agg", selectors=[{"matchLabels": {"f": "1"}}], rules=[R1, R2])
    assert not settled(live, [feeder, live])  # R2's feeder is gone, not yet recomputed
    live["rules"] = [R1]
    assert settled(live, [feeder, live])
    live["rules"] = []
    assert settled(live, [live])  # every feeder gone and the controller caught up


def test_recreation_is_only_what_the_controller_alone_wrote() -> None:
    recreated = {"metadata": {"name": "r", "managedFields": [
        {"manager": "clusterrole-aggregation-controller", "operation": "Apply"}]},
        "rules": [R1]}
    assert is_controller_recreation(recreated)
    ours = role("r", {"app.kubernetes.io/managed-by": "knative-fleet"},
                selectors=[{"matchLabels": {"f": "1"}}])
    ours["metadata"]["managedFields"] = recreated["metadata"]["managedFields"]
    assert not is_controller_recreation(ours)
    users = {"metadata": {"name": "r", "managedFields": [
        {"manager": "kubectl", "operation": "Apply"},
        {"manager": "clusterrole-aggregation-controller", "operation": "Apply"}]}}
    assert not is_controller_recreation(users)


def test_an_empty_recreation_counts_and_an_empty_role_someone_labelled_does_not() -> None:
    # What the API server stores for the controller's apply without rules: no manager.
    empty = {"metadata": {"name": "r", "uid": "u"}, "rules": None}
    assert is_controller_recreation(empty)
    labelled = {"metadata": {"name": "r", "labels": {"team": "a"}}, "rules": None}
    assert not is_controller_recreation(labelled)
    annotated = {"metadata": {"name": "r", "annotations": {"a": "b"}}, "rules": None}
    assert not is_controller_recreation(annotated)
    granting = {"metadata": {"name": "r"}, "rules": [R1]}
    assert not is_controller_recreation(granting)


def test_release_feeders_span_serving_and_eventing() -> None:
    plans = planning.plan_spoke(ServingSpec(version="1.23"), EventingSpec(version="1.23"),
                                RELEASE_BASE, {})
    objects = [o for p in plans for o in p.rendered.cluster_scoped]
    feeders = feeders_by_role(objects)
    assert set(feeders) == {
        "addressable-resolver", "channelable-manipulator", "crossnamespace-subscriber",
        "podspecable-binding", "source-observer",
        "knative-serving-aggregated-addressable-resolver", "knative-serving-admin"}
    assert "imc-subscriber" in feeders["crossnamespace-subscriber"]
    # Eventing's aggregated role selects a Serving role, and the other way round.
    assert "knative-serving-addressable-resolver" in feeders["addressable-resolver"]
    assert "imc-addressable-resolver" in feeders["knative-serving-aggregated-addressable-resolver"]
    by_name = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterRole"}
    for agg, names in feeders.items():
        assert all(feeds(by_name[n], by_name[agg]) for n in names)
        assert agg not in names


def test_selector_string_is_the_api_query_syntax() -> None:
    assert selector_string({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "c", "operator": "In", "values": ["x", "y"]},
        {"key": "d", "operator": "NotIn", "values": ["z"]},
        {"key": "e", "operator": "Exists"}, {"key": "f", "operator": "DoesNotExist"}]}) == \
        "a=1,b=2,c in (x,y),d notin (z),e,!f"
