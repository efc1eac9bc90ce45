"""`config` merges into the release ConfigMaps, operator style."""

from __future__ import annotations

import pytest

from core.errors import TransformError
from knative import manifests, releases
from knative.spec.config import merge_config
from lab.paths import RELEASES


def serving() -> manifests.Rendered:
    docs = []
    for url in releases.release_urls(f"file://{RELEASES}", "serving", "1.23.0"):
        docs.extend(releases.load_documents(url))
    return manifests.render(docs, namespace="knative-serving", cr_name="knative-serving",
                            component="serving")


def configmap(rendered: manifests.Rendered, name: str) -> dict:
    return next(o for o in rendered.namespaced
                if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name)


def test_keys_merge_and_unnamed_keys_keep_release_values() -> None:
    base = serving()
    release_example = configmap(base, "config-logging")["data"]["_example"]
    out = merge_config(serving(), {"logging": {"loglevel.controller": "debug"},
                                   "config-network": {"ingress-class": "x"}})
    assert configmap(out, "config-logging")["data"]["loglevel.controller"] == "debug"
    assert configmap(out, "config-logging")["data"]["_example"] == release_example
    assert configmap(out, "config-network")["data"]["ingress-class"] == "x"


def test_unknown_configmap_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        merge_config(serving(), {"nope": {"a": "b"}})
    assert "nope" in str(err.value) and "config-logging" in str(err.value)
