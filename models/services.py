"""spec.services: the model of the operator's ServicesTransform
(pkg/reconciler/common/services_override.go); knative.transforms.services applies it."""

from __future__ import annotations

from pydantic import Field, field_validator

from core.strict import Strict
from models.workloads import refuse_reserved_labels


class ServiceOverride(Strict):
    """`services[]`: labels, annotations and selector merged into one release Service."""

    name: str = Field(min_length=1)
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    selector: dict[str, str] = {}

    @field_validator("labels")
    @classmethod
    def no_reserved_labels(cls, value: dict[str, str]) -> dict[str, str]:
        return refuse_reserved_labels(value)
