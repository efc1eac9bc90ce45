"""spec.podDisruptionBudgets: the model of the operator's PodDisruptionBudgetsTransform
(pkg/reconciler/common/poddisruptionbudget_override.go);
knative.transforms.pod_disruption_budgets applies it.

The operator refuses minAvailable and maxUnavailable at once, as the model here does;
unlike the operator, an override with neither is refused too.
"""

from __future__ import annotations

import re

from pydantic import Field, StrictInt, field_validator, model_validator

from core.strict import Strict

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
