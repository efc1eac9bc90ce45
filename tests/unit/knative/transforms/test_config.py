"""`config` merges into the release ConfigMaps, operator style."""

from __future__ import annotations

import pytest

from core.errors import TransformError
from knative.transforms import config
from knative.transforms.config import user_config_sets
from models.component import ComponentSpec
from tests.support.releases import find, serving


def test_keys_merge_and_unnamed_keys_keep_release_values() -> None:
    release_example = find(serving(), "ConfigMap", "config-logging")["data"]["_example"]
    out = config.transform(serving(), ComponentSpec(config={
        "logging": {"loglevel.controller": "debug"}, "config-network": {"ingress-class": "x"}}))
    assert find(out, "ConfigMap", "config-logging")["data"]["loglevel.controller"] == "debug"
    assert find(out, "ConfigMap", "config-logging")["data"]["_example"] == release_example
    assert find(out, "ConfigMap", "config-network")["data"]["ingress-class"] == "x"


def test_unknown_configmap_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        config.transform(serving(), ComponentSpec(config={"nope": {"a": "b"}}))
    assert "nope" in str(err.value) and "config-logging" in str(err.value)


def test_no_config_changes_nothing() -> None:
    assert config.transform(serving(), ComponentSpec()) == serving()


@pytest.mark.parametrize(("user", "sets"), [
    (None, False), ({}, False), ({"network": {"other": "x"}}, False),
    ({"network": {"ingress-class": "x"}}, True),
    ({"config-network": {"ingress.class": "x"}}, True),
])
def test_user_config_sets_knows_both_spellings_of_a_configmap(
        user: dict | None, sets: bool) -> None:
    assert user_config_sets(user, "config-network", ("ingress-class", "ingress.class")) is sets
