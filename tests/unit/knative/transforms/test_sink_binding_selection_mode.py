"""`sinkBindingSelectionMode` against the real 1.23 Eventing release (operator parity:
pkg/reconciler/knativeeventing/common/sinkbindingselectionmode.go, run after the workload
overrides as one of knativeeventing.go's extra transformers)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.transforms import TRANSFORMS, default_broker_class, sink_binding_selection_mode
from models.component import EventingSpec, ServingSpec
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


# --- with the workloads' env: every transform of the index, as the operator runs them -------

WEBHOOK_RELEASE_ENV = [
    {"name": "SYSTEM_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    {"name": "CONFIG_LOGGING_NAME", "value": "config-logging"},
    {"name": "METRICS_DOMAIN", "value": "knative.dev/eventing"},
    {"name": "WEBHOOK_NAME", "value": "eventing-webhook"},
    {"name": "WEBHOOK_PORT", "value": "8443"},
    {"name": "SINK_BINDING_SELECTION_MODE", "value": "exclusion"},
    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
]


def release_env_with(mode: str, *extra: dict) -> list[dict]:
    """The release env of the eventing-webhook container, the mode in its place, then
    `extra` (what a workload env appended)."""
    return [{"name": e["name"], "value": mode} if e["name"] == "SINK_BINDING_SELECTION_MODE"
            else e for e in WEBHOOK_RELEASE_ENV] + list(extra)


def webhook_override(*env_vars: dict, container: str = "eventing-webhook") -> dict:
    return {"name": "eventing-webhook",
            "env": [{"container": container, "envVars": list(env_vars)}]}


def mode_var(value: str) -> dict:
    return {"name": "SINK_BINDING_SELECTION_MODE", "value": value}


def customized_webhook_env(raw: dict, rendered: Rendered | None = None) -> list[list[dict]]:
    spec = EventingSpec.model_validate(raw)
    out = eventing() if rendered is None else rendered
    for transform in TRANSFORMS:
        out = transform(out, spec)
    return webhook_env(out)


def test_the_release_env_is_what_these_tests_start_from() -> None:
    assert webhook_env(eventing()) == [WEBHOOK_RELEASE_ENV]
    assert customized_webhook_env({}) == [WEBHOOK_RELEASE_ENV]


def test_the_spec_mode_wins_over_a_workloads_env_value() -> None:
    # Operator: OverridesTransform sets the workload's value, then
    # SinkBindingSelectionModeTransform (an extra transformer) overwrites it in place.
    env = customized_webhook_env({
        "sinkBindingSelectionMode": "inclusion",
        "workloads": [webhook_override(mode_var("exclusion"),
                                       {"name": "FLEET_REGION", "value": "eu-west"})]})
    assert env == [release_env_with("inclusion", {"name": "FLEET_REGION", "value": "eu-west"})]
    env = customized_webhook_env({"sinkBindingSelectionMode": "exclusion",
                                  "deployments": [webhook_override(mode_var("inclusion"))]})
    assert env == [release_env_with("exclusion")]


def test_unset_takes_the_workloads_env_value() -> None:
    assert customized_webhook_env({"workloads": [webhook_override(mode_var("inclusion"))]}) \
        == [release_env_with("inclusion")]
    assert customized_webhook_env({"deployments": [webhook_override(mode_var("inclusion"))]}) \
        == [release_env_with("inclusion")]


def test_unset_prefers_workloads_over_deployments() -> None:
    # sinkBindingSelectionModeFromWorkloadOverrides looks through
    # append(Workloads, DeploymentOverride...); OverridesTransform applies deployments
    # first, workloads last: both say the workloads' value.
    env = customized_webhook_env({"deployments": [webhook_override(mode_var("inclusion"))],
                                  "workloads": [webhook_override(mode_var("exclusion"))]})
    assert env == [release_env_with("exclusion")]
    env = customized_webhook_env({"deployments": [webhook_override(mode_var("exclusion"))],
                                  "workloads": [webhook_override(mode_var("inclusion"))]})
    assert env == [release_env_with("inclusion")]


def test_unset_takes_the_first_workloads_entry_that_names_the_var() -> None:
    # OverridesTransform leaves the last entry's value; the operator's transform then
    # writes the first one's over it.
    env = customized_webhook_env({"workloads": [webhook_override(mode_var("inclusion")),
                                                webhook_override(mode_var("exclusion"))]})
    assert env == [release_env_with("inclusion")]


def test_unset_with_an_empty_workloads_value_is_exclusion() -> None:
    # Go reads an empty value as none: the operator's default applies.
    env = customized_webhook_env({"workloads": [webhook_override(mode_var(""))]})
    assert env == [release_env_with("exclusion")]


def test_unset_passes_a_workloads_value_on_unchecked() -> None:
    env = customized_webhook_env({"workloads": [webhook_override(mode_var("Inclusion"))]})
    assert env == [release_env_with("Inclusion")]


def test_unset_reads_only_the_eventing_webhook_container_and_sets_every_container() -> None:
    rendered = eventing()
    pod = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    pod["containers"].append({"name": "sidecar", "image": "example.com/sidecar"})
    # A value in the env of another container is no source of the mode: the operator
    # sets every container to the default over it.
    env = customized_webhook_env({"workloads": [webhook_override(
        mode_var("inclusion"), container="sidecar")]}, rendered)
    assert env == [release_env_with("exclusion"), [mode_var("exclusion")]]
    rendered = eventing()
    pod = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    pod["containers"].append({"name": "sidecar", "image": "example.com/sidecar"})
    env = customized_webhook_env({"workloads": [webhook_override(mode_var("inclusion"))]},
                                 rendered)
    assert env == [release_env_with("inclusion"), [mode_var("inclusion")]]


def test_unset_adds_the_default_to_a_container_without_it() -> None:
    rendered = eventing()
    pod = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    pod["containers"][0]["env"] = [e for e in pod["containers"][0]["env"]
                                   if e["name"] != "SINK_BINDING_SELECTION_MODE"]
    out = apply_sink_binding_selection_mode(rendered, None)
    assert webhook_env(out) == [[e for e in WEBHOOK_RELEASE_ENV
                                 if e["name"] != "SINK_BINDING_SELECTION_MODE"]
                                + [mode_var("exclusion")]]


def test_unset_without_an_eventing_webhook_changes_nothing() -> None:
    rendered = without(eventing(), "Deployment", "eventing-webhook")
    assert apply_sink_binding_selection_mode(rendered, None) == \
        without(eventing(), "Deployment", "eventing-webhook")


@pytest.mark.parametrize("raw", [{}, {"sinkBindingSelectionMode": "inclusion"}])
def test_a_workloads_value_from_is_an_error(raw: dict) -> None:
    # The operator would set a value next to the valueFrom: Kubernetes refuses that.
    value_from = {"name": "SINK_BINDING_SELECTION_MODE",
                  "valueFrom": {"configMapKeyRef": {"name": "sb", "key": "mode"}}}
    with pytest.raises(TransformError, match="valueFrom"):
        customized_webhook_env({**raw, "workloads": [webhook_override(value_from)]})


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
