"""`namespace` (and its deprecated spelling `namespaceConfiguration`), and which
namespace is ours to touch."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from core.problems import problem_lines
from knative.install_namespace import namespace_is_ours, namespace_object
from models.component import EventingSpec, ServingSpec
from tests.support.releases import serving_plan


@pytest.mark.parametrize("key", ["namespace", "namespaceConfiguration"])
def test_namespace_gets_the_entry_labels_annotations_and_ours(key: str) -> None:
    spec = ServingSpec.model_validate({key: {
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


def test_the_namespace_is_what_the_operators_applies_leave() -> None:
    # The operator applies every release Namespace object, moved into the install
    # namespace, one after the other (each replacing the last one's labels); Kourier's
    # comes after Serving's. Then the entry's labels, then its app.kubernetes.io/name.
    plan = serving_plan(namespace={"labels": {"team": "a",
                                              "app.kubernetes.io/version": "mine"}})
    labels = plan.namespace_object["metadata"]["labels"]
    assert labels["networking.knative.dev/ingress-provider"] == "kourier"
    assert labels["app.kubernetes.io/component"] == "net-kourier"
    assert labels["app.kubernetes.io/version"] == "mine"
    assert labels["app.kubernetes.io/name"] == "knative-serving"
    assert labels[MANAGED_BY_LABEL] == MANAGED_BY_VALUE
    release = {"labels": {"a": "release", "b": "release"}, "annotations": {"x": "y"}}
    obj = namespace_object("ns", ServingSpec.model_validate(
        {"namespace": {"labels": {"b": "entry"}}}), release, {"a": "operator"})
    assert obj["metadata"]["labels"] == {"a": "operator", "b": "entry",
                                         MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    assert obj["metadata"]["annotations"] == {"x": "y"}


def test_the_operator_key_and_the_deprecated_one_mean_the_same() -> None:
    settings = {"labels": {"team": "a"}, "annotations": {"n": "v"}}
    for model in (ServingSpec, EventingSpec):
        new = namespace_object("ns", model.model_validate({"namespace": settings}))
        old = namespace_object("ns", model.model_validate({"namespaceConfiguration": settings}))
        assert new == old
        assert new["metadata"]["labels"]["team"] == "a"


def test_both_spellings_at_once_are_refused_at_the_deprecated_key() -> None:
    with pytest.raises(ValidationError) as err:
        ServingSpec.model_validate({"namespace": {"labels": {"a": "1"}},
                                    "namespaceConfiguration": {"labels": {"b": "2"}}})
    [line] = problem_lines(err.value, "fleet[0].serving.")
    assert line.startswith("fleet[0].serving.namespaceConfiguration: ")
    assert "move its labels and annotations under `namespace`" in line
    assert "remove `namespaceConfiguration`" in line


def test_an_empty_namespace_key_still_conflicts_with_the_old_one() -> None:
    with pytest.raises(ValidationError, match="deprecated"):
        EventingSpec.model_validate({"namespace": {}, "namespaceConfiguration": {}})


def test_namespace_refuses_unknown_keys() -> None:
    with pytest.raises(ValidationError) as err:
        ServingSpec.model_validate({"namespace": {"label": {"a": "1"}}})
    assert problem_lines(err.value) == ["namespace.label: unknown key (typo?)"]


def test_the_plan_takes_the_operator_key() -> None:
    plan = serving_plan(namespace={"labels": {"team": "b"}, "annotations": {"x": "y"}})
    assert plan.namespace_object is not None
    assert plan.namespace_object["metadata"]["labels"]["team"] == "b"
    assert plan.namespace_object["metadata"]["annotations"] == {"x": "y"}
