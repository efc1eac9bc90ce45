"""`services` against the real 1.23 Serving and Eventing releases (operator parity:
ServicesTransform, pkg/reconciler/common/services_override.go)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from core.names import CR_NAME_LABEL, MANAGED_BY_LABEL
from knative.manifests import Rendered
from knative.transforms import services
from models.component import ComponentSpec
from models.services import ServiceOverride
from tests.support.releases import eventing, find, serving


def apply_service_overrides(rendered: Rendered,
                            overrides: list[ServiceOverride] | None) -> Rendered:
    return services.transform(rendered, ComponentSpec(services=overrides or []))


def test_service_labels_annotations_and_selector_merge() -> None:
    out = apply_service_overrides(serving(), [ServiceOverride(
        name="activator-service", labels={"team": "x"},
        annotations={"prometheus.io/scrape": "true"}, selector={"role": "activator"})])
    service = find(out, "Service", "activator-service")
    assert service["metadata"]["labels"]["team"] == "x"
    assert service["metadata"]["labels"][CR_NAME_LABEL] == "knative-serving"
    assert service["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert service["spec"]["selector"] == {"app": "activator", "role": "activator"}


def test_service_override_on_eventing() -> None:
    out = apply_service_overrides(eventing(), [ServiceOverride(
        name="broker-ingress", annotations={"a": "b"})])
    assert find(out, "Service", "broker-ingress")["metadata"]["annotations"] == {
        "a": "b", "pulumi.com/skipAwait": "true"}


def test_unknown_service_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        apply_service_overrides(serving(), [ServiceOverride(name="activator", labels={"a": "b"})])
    assert "'activator'" in str(err.value) and "activator-service" in str(err.value)
    assert apply_service_overrides(serving(), None) == serving()


@pytest.mark.parametrize("raw, fragment", [
    ({"name": "s", "selectors": {}}, "selectors"),
    ({"name": "s", "labels": {MANAGED_BY_LABEL: "me"}},
     "set by knative-fleet"),
])
def test_model_refuses_bad_input(raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        ServiceOverride.model_validate(raw)
    assert fragment in str(err.value)
