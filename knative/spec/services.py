"""spec.services: the operator's ServicesTransform (pkg/reconciler/common/services_override.go).

Labels, annotations and selector merged into one release Service, by name. Unlike the
operator, which skips what it cannot match, a name the release does not have is a
`TransformError` that lists the known names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator

from core.strict import Strict
from knative.manifests import Rendered
from knative.objects import named_objects
from knative.spec.workloads import refuse_reserved_labels

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec


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


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Labels, annotations and selector merged into the named Service (a selector that
    matches no pods is the user's choice)."""
    for override, service in named_objects(rendered, "Service", spec.services, "services"):
        meta = service["metadata"]
        for field, values in (("labels", override.labels),
                              ("annotations", override.annotations)):
            if values:
                meta[field] = {**(meta.get(field) or {}), **values}
        if override.selector:
            service_spec = service.setdefault("spec", {})
            service_spec["selector"] = {**(service_spec.get("selector") or {}),
                                        **override.selector}
    return rendered
