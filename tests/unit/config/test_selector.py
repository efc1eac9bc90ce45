"""Label selectors as Kubernetes reads them: every operator, the empty selector, no match."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from config.selector import LabelSelector

LABELS = {"ring": "canary", "region": "eu"}


def sel(**raw: object) -> LabelSelector:
    return LabelSelector.model_validate(raw)


@pytest.mark.parametrize(("raw", "matches"), [
    ({}, True),
    ({"matchLabels": {"ring": "canary"}}, True),
    ({"matchLabels": {"ring": "main"}}, False),
    ({"matchLabels": {"ring": "canary", "region": "us"}}, False),
    ({"matchExpressions": [{"key": "ring", "operator": "In", "values": ["main", "canary"]}]},
     True),
    ({"matchExpressions": [{"key": "ring", "operator": "In", "values": ["main"]}]}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}, False),
    ({"matchExpressions": [{"key": "ring", "operator": "NotIn", "values": ["main"]}]}, True),
    ({"matchExpressions": [{"key": "ring", "operator": "NotIn", "values": ["canary"]}]}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a"]}]}, True),
    ({"matchExpressions": [{"key": "region", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, True),
    ({"matchExpressions": [{"key": "ring", "operator": "DoesNotExist"}]}, False),
    ({"matchLabels": {"region": "eu"},
      "matchExpressions": [{"key": "ring", "operator": "NotIn", "values": ["canary"]}]}, False),
])
def test_matches_as_kubernetes_does(raw: dict, matches: bool) -> None:
    assert sel(**raw).matches(LABELS) is matches


def test_empty_selector_matches_a_profile_without_labels() -> None:
    assert sel().matches({})


@pytest.mark.parametrize(("expr", "message"), [
    ({"key": "ring", "operator": "In"}, "operator In needs at least one value"),
    ({"key": "ring", "operator": "NotIn", "values": []}, "operator NotIn needs"),
    ({"key": "ring", "operator": "Exists", "values": ["x"]}, "operator Exists takes no values"),
    ({"key": "ring", "operator": "Equals", "values": ["x"]}, "'In', 'NotIn', 'Exists'"),
])
def test_bad_requirements_are_refused(expr: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        sel(matchExpressions=[expr])


def test_describe_is_kubectl_syntax() -> None:
    s = sel(matchLabels={"env": "prod"}, matchExpressions=[
        {"key": "ring", "operator": "In", "values": ["a", "b"]},
        {"key": "x", "operator": "Exists"}, {"key": "y", "operator": "DoesNotExist"}])
    assert s.describe() == "env=prod,ring in (a,b),x,!y"
    assert sel().describe() == "(everything)"
