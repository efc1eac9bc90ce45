"""`podDisruptionBudgets` against the real 1.23 Serving and Eventing releases (operator
parity: PodDisruptionBudgetsTransform, pkg/reconciler/common/poddisruptionbudget_override.go)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.transforms import pod_disruption_budgets
from models.component import ComponentSpec
from models.pod_disruption_budgets import PodDisruptionBudgetOverride
from tests.support.releases import eventing, find, serving


def apply_pdb_overrides(rendered: Rendered,
                        overrides: list[PodDisruptionBudgetOverride] | None) -> Rendered:
    return pod_disruption_budgets.transform(
        rendered, ComponentSpec(pod_disruption_budgets=overrides or []))


def test_pdb_min_available() -> None:
    out = apply_pdb_overrides(serving(), [PodDisruptionBudgetOverride(
        name="activator-pdb", minAvailable=1)])
    spec = find(out, "PodDisruptionBudget", "activator-pdb")["spec"]
    assert spec["minAvailable"] == 1 and "maxUnavailable" not in spec
    assert spec["selector"] == {"matchLabels": {"app": "activator"}}


def test_pdb_max_unavailable_replaces_min_available() -> None:
    out = apply_pdb_overrides(eventing(), [PodDisruptionBudgetOverride(
        name="eventing-webhook", maxUnavailable="50%")])
    spec = find(out, "PodDisruptionBudget", "eventing-webhook")["spec"]
    assert spec["maxUnavailable"] == "50%" and "minAvailable" not in spec


def test_unknown_pdb_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        apply_pdb_overrides(serving(), [PodDisruptionBudgetOverride(
            name="activator", minAvailable="50%")])
    assert "'activator'" in str(err.value) and "activator-pdb, webhook-pdb" in str(err.value)
    assert apply_pdb_overrides(serving(), []) == serving()


def test_model_accepts_operator_spelling() -> None:
    assert PodDisruptionBudgetOverride.model_validate(
        {"name": "p", "maxUnavailable": 1}).max_unavailable == 1


@pytest.mark.parametrize("raw, fragment", [
    ({"name": "p", "minAvailable": 1, "maxUnavailable": 1},
     "exactly one"),
    ({"name": "p"}, "exactly one"),
    ({"name": "p", "minAvailable": -1}, ">= 0"),
    ({"name": "p", "minAvailable": True}, "valid integer"),
    ({"name": "p", "minAvailable": "120%"}, "percentage"),
    ({"name": "p", "maxUnavailable": "half"}, "percentage"),
    ({"name": "p", "minAvailable": 1, "selector": {}}, "selector"),
])
def test_model_refuses_bad_input(raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        PodDisruptionBudgetOverride.model_validate(raw)
    assert fragment in str(err.value)


@pytest.mark.parametrize("name", ["activator-pdb", "webhook-pdb"])
def test_pdb_max_unavailable_on_serving_as_the_operator_applies_it(name: str) -> None:
    assert "minAvailable" in find(serving(), "PodDisruptionBudget", name)["spec"]
    out = apply_pdb_overrides(serving(), [PodDisruptionBudgetOverride(
        name=name, maxUnavailable=1)])
    spec = find(out, "PodDisruptionBudget", name)["spec"]
    assert spec["maxUnavailable"] == 1 and "minAvailable" not in spec
