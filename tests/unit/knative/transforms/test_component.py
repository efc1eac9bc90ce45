"""The Serving and Eventing spec models: every key of the operator's spelling, each
from its own module."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from models.component import ComponentSpec, EventingSpec, ServingSpec


def test_eventing_spec_parses_the_operator_keys() -> None:
    options = EventingSpec.model_validate({
        "defaultBrokerClass": "Kafka", "sinkBindingSelectionMode": "inclusion",
        "source": {"kafka": {"enabled": True}, "github": {}, "ceph": {"enabled": False}}})
    assert options.default_broker_class == "Kafka"
    assert options.sink_binding_selection_mode == "inclusion"
    assert options.source.enabled_names() == ["github", "kafka"]  # the operator's order


def test_eventing_keys_default_to_the_release_behaviour() -> None:
    options = EventingSpec()
    assert options.default_broker_class is None
    assert options.sink_binding_selection_mode is None
    assert options.source.enabled_names() == []


def test_field_order_is_the_order_problems_are_reported_in() -> None:
    shared = list(ComponentSpec.model_fields)
    assert list(ServingSpec.model_fields) == [*shared, "ingress", "controller_custom_certs"]
    assert list(EventingSpec.model_fields) == [
        "default_broker_class", "sink_binding_selection_mode", "source", *shared]


@pytest.mark.parametrize(("model", "key"), [
    (EventingSpec, "ingress"), (EventingSpec, "controller-custom-certs"),
    (ServingSpec, "defaultBrokerClass"), (ServingSpec, "source"),
])
def test_keys_of_the_other_component_are_refused(model: type, key: str) -> None:
    with pytest.raises(ValidationError, match=key):
        model.model_validate({key: {}})
