"""`defaultBrokerClass` against the real 1.23 Eventing release (operator parity:
pkg/reconciler/knativeeventing/common/defaultbroker.go, run after ConfigMapTransform as
one of knativeeventing.go's extra transformers)."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.transforms import TRANSFORMS, config, default_broker_class
from models.component import EventingSpec, ServingSpec
from tests.support.releases import eventing, find, serving, without


def apply_default_broker_class(rendered: Rendered, broker_class: str | None,
                               user_config: dict[str, dict[str, str]] | None = None
                               ) -> Rendered:
    # model_construct: the transform's own checks, without the model's validation.
    spec = EventingSpec.model_construct(default_broker_class=broker_class,
                                        config=user_config or {})
    return default_broker_class.transform(rendered, spec)


def merge_config(rendered: Rendered, user_config: dict[str, dict[str, str]]) -> Rendered:
    return config.transform(rendered, EventingSpec(config=user_config))


def broker_defaults(rendered: Rendered) -> dict:
    return yaml.safe_load(find(rendered, "ConfigMap", "config-br-defaults")["data"]
                          ["default-br-config"])


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


def test_unset_default_broker_class_writes_the_release_value_anew() -> None:
    # The operator rewrites the key every time (writeDefaultsToConfigMap), sorted: the
    # same meaning as the release's, in the operator's text.
    out = apply_default_broker_class(eventing(), None)
    assert broker_defaults(out) == broker_defaults(eventing())
    assert find(out, "ConfigMap", "config-br-defaults")["data"]["default-br-config"] == \
        yaml.safe_dump(broker_defaults(eventing()), sort_keys=True)


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


def customized_broker_config(raw: dict) -> str:
    """config-br-defaults `default-br-config` with every transform of the index applied."""
    spec = EventingSpec.model_validate(raw)
    out = eventing()
    for transform in TRANSFORMS:
        out = transform(out, spec)
    return find(out, "ConfigMap", "config-br-defaults")["data"]["default-br-config"]


# A `config` value for default-br-config that names no broker class.
WITHOUT_CLASS = "clusterDefault:\n  delivery:\n    retry: 3\n"


@pytest.mark.parametrize("configmap", ["br-defaults", "config-br-defaults"])
def test_the_class_is_added_to_a_users_default_br_config_without_one(configmap: str) -> None:
    # Operator: ConfigMapTransform puts the user's value in, then
    # DefaultBrokerConfigMapTransform (an extra transformer, after it) adds the class.
    raw = {"defaultBrokerClass": "Kafka", "config": {configmap: {
        "default-br-config": WITHOUT_CLASS}}}
    assert customized_broker_config(raw) == (
        "clusterDefault:\n  brokerClass: Kafka\n  delivery:\n    retry: 3\n")


def test_unset_adds_the_operators_default_to_a_users_default_br_config() -> None:
    raw = {"config": {"br-defaults": {"default-br-config": WITHOUT_CLASS}}}
    assert customized_broker_config(raw) == (
        "clusterDefault:\n  brokerClass: MTChannelBasedBroker\n  delivery:\n    retry: 3\n")


def test_config_applied_after_the_class_would_lose_it() -> None:
    # Why default_broker_class runs after config: the other way round the user's value
    # replaces the whole key, class and all.
    spec = EventingSpec.model_validate({"defaultBrokerClass": "Kafka", "config": {
        "br-defaults": {"default-br-config": WITHOUT_CLASS}}})
    wrong = config.transform(default_broker_class.transform(eventing(), spec), spec)
    right = default_broker_class.transform(config.transform(eventing(), spec), spec)
    assert "brokerClass" not in broker_defaults(wrong)["clusterDefault"]
    assert broker_defaults(right)["clusterDefault"]["brokerClass"] == "Kafka"


def test_brokerclass_anywhere_in_the_users_value_keeps_it_as_written() -> None:
    # The operator's findDefaultBrokerClassDefined: any "brokerClass:" in the value, a
    # namespace default's too; the cluster default then gets no class from the spec.
    mine = ("clusterDefault:\n  delivery:\n    retry: 3\n"
            "namespaceDefaults:\n  team-a:\n    brokerClass: Kafka\n")
    for raw in ({"defaultBrokerClass": "Kafka"}, {}):
        assert customized_broker_config(
            {**raw, "config": {"config-br-defaults": {"default-br-config": mine}}}) == mine


def test_the_spec_class_is_what_the_whole_index_writes() -> None:
    raw = {"defaultBrokerClass": "Kafka", "config": {"br-defaults": {"_example": "x"}}}
    base = broker_defaults(eventing())
    base["clusterDefault"]["brokerClass"] = "Kafka"
    assert yaml.safe_load(customized_broker_config(raw)) == base


def test_the_default_class_is_what_unset_writes() -> None:
    assert apply_default_broker_class(eventing(), "MTChannelBasedBroker") == \
        apply_default_broker_class(eventing(), None)
    assert customized_broker_config({"defaultBrokerClass": "MTChannelBasedBroker"}) == \
        customized_broker_config({})


def test_unset_without_config_br_defaults_changes_nothing() -> None:
    rendered = without(eventing(), "ConfigMap", "config-br-defaults")
    assert apply_default_broker_class(rendered, None) == \
        without(eventing(), "ConfigMap", "config-br-defaults")


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


@pytest.mark.parametrize("raw, message", [
    ({"defaultBrokerClass": ""}, "defaultBrokerClass"),
    ({"defaultBrokerClass": "My Broker"}, "defaultBrokerClass"),
    ({"defaultbrokerclass": "Kafka"}, "defaultbrokerclass"),
])
def test_bad_default_broker_class_is_refused_by_the_model(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EventingSpec.model_validate(raw)


def test_serving_has_no_default_broker_class() -> None:
    assert default_broker_class.transform(serving(), ServingSpec()) == serving()
