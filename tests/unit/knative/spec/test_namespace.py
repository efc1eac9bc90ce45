"""`namespaceConfiguration`, and which namespace is ours to touch."""

from __future__ import annotations

from knative.objects import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from knative.spec.component import ServingSpec
from knative.spec.namespace import namespace_is_ours, namespace_object
from tests.support.releases import serving_plan


def test_namespace_gets_the_entry_labels_annotations_and_ours() -> None:
    spec = ServingSpec.model_validate({"namespaceConfiguration": {
        "labels": {"team": "a", MANAGED_BY_LABEL: "someone"}, "annotations": {"n": "v"}}})
    assert namespace_object("knative-serving", spec) == {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "knative-serving",
                     "labels": {"team": "a", MANAGED_BY_LABEL: MANAGED_BY_VALUE},
                     "annotations": {"n": "v"}}}


def test_no_annotations_key_without_annotations() -> None:
    assert "annotations" not in namespace_object("x", ServingSpec())["metadata"]


def test_only_a_namespace_we_created_is_ours() -> None:
    assert namespace_is_ours(None)
    assert namespace_is_ours({MANAGED_BY_LABEL: MANAGED_BY_VALUE})
    assert not namespace_is_ours({})
    assert not namespace_is_ours({MANAGED_BY_LABEL: "helm"})


def test_the_plan_carries_the_namespace_object() -> None:
    plan = serving_plan(namespaceConfiguration={"labels": {"team": "a"}})
    assert plan.namespace_object is not None
    assert plan.namespace_object["metadata"]["labels"]["team"] == "a"
