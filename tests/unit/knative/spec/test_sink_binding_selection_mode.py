"""`sinkBindingSelectionMode` against the real 1.23 Eventing release (operator parity:
pkg/reconciler/knativeeventing/common/sinkbindingselectionmode.go)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.spec import default_broker_class, sink_binding_selection_mode
from knative.spec.component import EventingSpec, ServingSpec
from tests.support.releases import eventing, find, serving, without


def apply_sink_binding_selection_mode(rendered: Rendered, mode: str | None) -> Rendered:
    # model_construct: the transform's own checks, without the model's validation.
    spec = EventingSpec.model_construct(sink_binding_selection_mode=mode)
    return sink_binding_selection_mode.transform(rendered, spec)


def webhook_env(rendered: Rendered) -> list[list[dict]]:
    containers = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    return [c.get("env", []) for c in containers["containers"]]


def mode_values(rendered: Rendered) -> list[list[str]]:
    return [[e["value"] for e in env if e["name"] == "SINK_BINDING_SELECTION_MODE"]
            for env in webhook_env(rendered)]


def test_release_selection_mode_is_the_operators_default() -> None:
    assert mode_values(eventing()) == [["exclusion"]]


@pytest.mark.parametrize("mode", ["inclusion", "exclusion"])
def test_selection_mode_replaces_the_release_value_in_place(mode: str) -> None:
    base_env = webhook_env(eventing())[0]
    out = apply_sink_binding_selection_mode(eventing(), mode)
    assert mode_values(out) == [[mode]]
    env = webhook_env(out)[0]
    assert [e["name"] for e in env] == [e["name"] for e in base_env]  # same position


def test_selection_mode_is_added_to_every_container_that_lacks_it() -> None:
    rendered = eventing()
    spec = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    spec["containers"][0]["env"] = [e for e in spec["containers"][0]["env"]
                                    if e["name"] != "SINK_BINDING_SELECTION_MODE"]
    spec["containers"].append({"name": "sidecar", "image": "example.com/sidecar"})
    out = apply_sink_binding_selection_mode(rendered, "inclusion")
    assert mode_values(out) == [["inclusion"], ["inclusion"]]
    assert webhook_env(out)[1] == [{"name": "SINK_BINDING_SELECTION_MODE", "value": "inclusion"}]


def test_unset_selection_mode_changes_nothing() -> None:
    assert apply_sink_binding_selection_mode(eventing(), None) == eventing()


@pytest.mark.parametrize("mode", ["Inclusion", "include", ""])
def test_bad_selection_mode_is_an_error(mode: str) -> None:
    with pytest.raises(TransformError, match="inclusion, exclusion"):
        apply_sink_binding_selection_mode(eventing(), mode)


def test_missing_eventing_webhook_is_an_error() -> None:
    with pytest.raises(TransformError, match="Deployment 'eventing-webhook'"):
        apply_sink_binding_selection_mode(
            without(eventing(), "Deployment", "eventing-webhook"), "inclusion")


def test_options_change_only_their_objects() -> None:
    base = eventing()
    spec = EventingSpec(defaultBrokerClass="Kafka", sinkBindingSelectionMode="inclusion")
    out = sink_binding_selection_mode.transform(
        default_broker_class.transform(eventing(), spec), spec)
    changed = {(o["kind"], o["metadata"]["name"])
               for o, b in zip(out.namespaced, base.namespaced, strict=True) if o != b}
    assert changed == {("ConfigMap", "config-br-defaults"), ("Deployment", "eventing-webhook")}


@pytest.mark.parametrize("raw, message", [
    ({"sinkBindingSelectionMode": "all"}, "sinkBindingSelectionMode"),
    ({"sinkBindingSelectionMode": "Inclusion"}, "sinkBindingSelectionMode"),
])
def test_bad_selection_mode_is_refused_by_the_model(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EventingSpec.model_validate(raw)


def test_serving_has_no_selection_mode() -> None:
    assert sink_binding_selection_mode.transform(serving(), ServingSpec()) == serving()
