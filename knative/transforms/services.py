"""spec.services: the operator's ServicesTransform (pkg/reconciler/common/services_override.go).

Labels, annotations and selector merged into one release Service, by name. Unlike the
operator, which skips what it cannot match, a name the release does not have is a
`TransformError` that lists the known names.
"""

from __future__ import annotations

from knative.objects import Rendered, named_objects
from models.component import ComponentSpec


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
