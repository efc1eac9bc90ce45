"""spec.podDisruptionBudgets: the operator's PodDisruptionBudgetsTransform
(pkg/reconciler/common/poddisruptionbudget_override.go).

minAvailable or maxUnavailable of one release PodDisruptionBudget, by name. The operator
sets both fields from the override (v0.48.1: `Spec.MinAvailable = override.MinAvailable`,
`Spec.MaxUnavailable = override.MaxUnavailable`), so the one given is applied and the
other cleared; it refuses both at once, as the model here does. Unlike the operator,
which skips what it cannot match (and an override with neither), a name the release does
not have is a `TransformError` that lists the known names, and an override with neither
is refused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import Field, StrictInt, field_validator, model_validator

from core.strict import Strict
from knative.manifests import Rendered
from knative.objects import named_objects

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

_PERCENT = re.compile(r"^(\d{1,3})%$")

# StrictInt: YAML `true` or `1.5` is a mistake, not 1.
IntOrPercent = StrictInt | str


class PodDisruptionBudgetOverride(Strict):
    """`podDisruptionBudgets[]`: minAvailable or maxUnavailable of one release PDB."""

    name: str = Field(min_length=1)
    min_available: IntOrPercent | None = Field(None, alias="minAvailable")
    max_unavailable: IntOrPercent | None = Field(None, alias="maxUnavailable")

    @field_validator("min_available", "max_unavailable")
    @classmethod
    def int_or_percent(cls, value: IntOrPercent | None) -> IntOrPercent | None:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"must be >= 0, got {value}")
        if isinstance(value, str):
            match = _PERCENT.match(value)
            if not match or int(match.group(1)) > 100:
                raise ValueError(f"must be an integer or a percentage like '80%', got {value!r}")
        return value

    @model_validator(mode="after")
    def exactly_one(self) -> PodDisruptionBudgetOverride:
        # A PodDisruptionBudget takes one of the two; Kubernetes rejects both.
        if (self.min_available is None) == (self.max_unavailable is None):
            raise ValueError(
                f"podDisruptionBudget {self.name!r}: give exactly one of minAvailable and "
                f"maxUnavailable")
        return self


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """The named PDB gets the given minAvailable or maxUnavailable and loses the other (a
    PDB takes only one), as the operator's PodDisruptionBudgetsTransform does."""
    for override, pdb in named_objects(rendered, "PodDisruptionBudget",
                                       spec.pod_disruption_budgets, "podDisruptionBudgets"):
        pdb_spec = pdb.setdefault("spec", {})
        if override.min_available is not None:
            pdb_spec["minAvailable"] = override.min_available
            pdb_spec.pop("maxUnavailable", None)
        else:
            pdb_spec["maxUnavailable"] = override.max_unavailable
            pdb_spec.pop("minAvailable", None)
    return rendered
