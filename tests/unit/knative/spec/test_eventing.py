"""Eventing's defaultBrokerClass, sinkBindingSelectionMode and source against the real 1.23
release (operator parity: pkg/reconciler/knativeeventing/common)."""

from __future__ import annotations

import copy
import functools

import pytest
import yaml
from pydantic import ValidationError

from core.errors import TransformError
from knative import manifests, releases
from knative.manifests import Rendered
from knative.spec.config import merge_config
from knative.spec.eventing import (
    EventingOptions,
    EventingSources,
    apply_default_broker_class,
    apply_sink_binding_selection_mode,
)
from lab.paths import RELEASES


@functools.lru_cache(maxsize=8)
def _eventing() -> Rendered:
    docs: list[dict] = []
    for url in releases.release_urls(f"file://{RELEASES}", "eventing", "1.23.0"):
        docs.extend(releases.load_documents(url))
    return manifests.render(docs, namespace="knative-eventing", cr_name="knative-eventing",
                            component="eventing")


def eventing() -> Rendered:
    """A fresh copy per test: transforms mutate in place."""
    return copy.deepcopy(_eventing())


def find(rendered: Rendered, kind: str, name: str) -> dict:
    return next(o for o in rendered.namespaced
                if o["kind"] == kind and o["metadata"]["name"] == name)


def broker_defaults(rendered: Rendered) -> dict:
    return yaml.safe_load(find(rendered, "ConfigMap", "config-br-defaults")["data"]
                          ["default-br-config"])


def webhook_env(rendered: Rendered) -> list[list[dict]]:
    containers = find(rendered, "Deployment", "eventing-webhook")["spec"]["template"]["spec"]
    return [c.get("env", []) for c in containers["containers"]]


def without(rendered: Rendered, kind: str, name: str) -> Rendered:
    rendered.namespaced = [o for o in rendered.namespaced
                           if not (o["kind"] == kind and o["metadata"]["name"] == name)]
    return rendered


# --- defaultBrokerClass ---------------------------------------------------------------------

def test_release_default_broker_class_is_the_operators_default() -> None:
    assert broker_defaults(eventing())["clusterDefault"]["brokerClass"] == "MTChannelBasedBroker"


def test_default_broker_class_is_written_into_cluster_default() -> None:
    base = broker_defaults(eventing())
    out = apply_default_broker_class(eventing(), "Kafka")
    defaults = broker_defaults(out)
    assert defaults["clusterDefault"]["brokerClass"] == "Kafka"
    # The rest of the release's defaults (channel config, delivery) is kept.
    base["clusterDefault"]["brokerClass"] = "Kafka"
    assert defaults == base
    assert defaults["clusterDefault"]["delivery"]["retry"] == 10


def test_unset_default_broker_class_changes_nothing() -> None:
    assert apply_default_broker_class(eventing(), None) == eventing()


@pytest.mark.parametrize("configmap", ["br-defaults", "config-br-defaults"])
def test_the_users_default_br_config_wins(configmap: str) -> None:
    mine = "clusterDefault:\n  brokerClass: MyBroker\n"
    user = {configmap: {"default-br-config": mine}}
    before = eventing()
    assert apply_default_broker_class(eventing(), "Kafka", user) == before
    # In either order with merge_config, the user's value is what the spoke gets.
    for out in (apply_default_broker_class(merge_config(eventing(), user), "Kafka", user),
                merge_config(apply_default_broker_class(eventing(), "Kafka", user), user)):
        assert find(out, "ConfigMap", "config-br-defaults")["data"]["default-br-config"] == mine


def test_user_config_for_other_keys_does_not_stop_the_broker_class() -> None:
    out = apply_default_broker_class(eventing(), "Kafka", {"br-defaults": {"_example": "x"},
                                                           "features": {"x": "y"}})
    assert broker_defaults(out)["clusterDefault"]["brokerClass"] == "Kafka"


def test_missing_config_br_defaults_is_an_error() -> None:
    with pytest.raises(TransformError, match="ConfigMap 'config-br-defaults'"):
        apply_default_broker_class(without(eventing(), "ConfigMap", "config-br-defaults"),
                                   "Kafka")


@pytest.mark.parametrize("content, message", [
    ("clusterDefault: [unclosed", "not valid YAML"),
    ("- a list", "must be a mapping"),
    ("clusterDefault: text", "must be a mapping"),
])
def test_unusable_default_br_config_is_an_error(content: str, message: str) -> None:
    rendered = eventing()
    find(rendered, "ConfigMap", "config-br-defaults")["data"]["default-br-config"] = content
    with pytest.raises(TransformError, match=message):
        apply_default_broker_class(rendered, "Kafka")


def test_an_empty_default_br_config_gets_a_cluster_default() -> None:
    rendered = eventing()
    find(rendered, "ConfigMap", "config-br-defaults")["data"].pop("default-br-config")
    out = apply_default_broker_class(rendered, "Kafka")
    assert broker_defaults(out) == {"clusterDefault": {"brokerClass": "Kafka"}}


@pytest.mark.parametrize("broker_class", ["", "My Broker"])
def test_bad_broker_class_is_an_error(broker_class: str) -> None:
    with pytest.raises(TransformError, match="defaultBrokerClass"):
        apply_default_broker_class(eventing(), broker_class)


# --- sinkBindingSelectionMode ---------------------------------------------------------------

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
    out = apply_sink_binding_selection_mode(apply_default_broker_class(eventing(), "Kafka"),
                                            "inclusion")
    changed = {(o["kind"], o["metadata"]["name"])
               for o, b in zip(out.namespaced, base.namespaced, strict=True) if o != b}
    assert changed == {("ConfigMap", "config-br-defaults"), ("Deployment", "eventing-webhook")}


# --- models ---------------------------------------------------------------------------------

def test_eventing_options_parse_the_operator_keys() -> None:
    options = EventingOptions.model_validate({
        "defaultBrokerClass": "Kafka", "sinkBindingSelectionMode": "inclusion",
        "source": {"kafka": {"enabled": True}, "github": {}, "ceph": {"enabled": False}}})
    assert options.default_broker_class == "Kafka"
    assert options.sink_binding_selection_mode == "inclusion"
    assert options.source.enabled_names() == ["kafka", "github"]


def test_eventing_options_default_to_the_release_behaviour() -> None:
    options = EventingOptions()
    assert options.default_broker_class is None
    assert options.sink_binding_selection_mode is None
    assert options.source.enabled_names() == []


@pytest.mark.parametrize("raw, message", [
    ({"sinkBindingSelectionMode": "all"}, "sinkBindingSelectionMode"),
    ({"sinkBindingSelectionMode": "Inclusion"}, "sinkBindingSelectionMode"),
    ({"defaultBrokerClass": ""}, "defaultBrokerClass"),
    ({"defaultBrokerClass": "My Broker"}, "defaultBrokerClass"),
    ({"defaultbrokerclass": "Kafka"}, "defaultbrokerclass"),
    ({"source": {"prometheus": {"enabled": True}}}, "prometheus"),
    ({"source": {"kafka": {"enabled": True, "bootstrapServers": "x"}}}, "bootstrapServers"),
    ({"source": {"kafka": True}}, "kafka"),
])
def test_bad_eventing_options_are_refused(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EventingOptions.model_validate(raw)


def test_sources_are_the_ones_releases_can_load() -> None:
    assert list(EventingSources.model_fields) == list(releases.SOURCE_FILES)
    every = EventingSources.model_validate({name: {} for name in releases.SOURCE_FILES})
    assert every.enabled_names() == list(releases.SOURCE_FILES)
