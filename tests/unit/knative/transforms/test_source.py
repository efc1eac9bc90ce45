"""`source`: which eventing sources are loaded beside Eventing, and where their objects
land (operator parity: pkg/reconciler/knativeeventing/source/source.go)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from knative import releases
from knative.transforms.source import enabled_sources
from models.component import EventingSpec, ServingSpec
from models.source import EventingSources
from tests.support.releases import eventing_plan


@pytest.mark.parametrize("source", ["kafka", "rabbitmq", "redis", "github", "gitlab", "ceph"])
def test_each_source_lands_in_the_eventing_namespace_beside_the_core(source: str) -> None:
    core = eventing_plan()
    plan = eventing_plan(source={source: {"enabled": True}})
    assert len(plan.rendered.namespaced) > len(core.rendered.namespaced)
    assert {o["metadata"]["namespace"] for o in plan.rendered.namespaced} == {"knative-eventing"}
    keys = [(o["kind"], o["metadata"]["name"]) for o in plan.rendered.namespaced]
    assert len(keys) == len(set(keys))


def test_the_core_keeps_its_own_copy_of_objects_a_source_repeats() -> None:
    core = {o["metadata"]["name"]: o for o in eventing_plan().rendered.namespaced
            if o["kind"] == "ConfigMap"}
    plan = {o["metadata"]["name"]: o for o in
            eventing_plan(source={"github": {}}).rendered.namespaced if o["kind"] == "ConfigMap"}
    assert plan["config-logging"] == core["config-logging"]


def test_a_disabled_source_installs_nothing() -> None:
    assert len(eventing_plan(source={"github": {"enabled": False}}).rendered.namespaced) == \
        len(eventing_plan().rendered.namespaced)


def test_entry_options_reach_source_objects_too() -> None:
    plan = eventing_plan(source={"github": {}}, registry={"imagePullSecrets": [{"name": "r"}]})
    github = next(o for o in plan.rendered.namespaced
                  if o["kind"] == "Deployment" and o["metadata"]["name"].startswith("github"))
    assert github["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "r"}]


@pytest.mark.parametrize("raw, message", [
    ({"source": {"prometheus": {"enabled": True}}}, "prometheus"),
    ({"source": {"kafka": {"enabled": True, "bootstrapServers": "x"}}}, "bootstrapServers"),
    ({"source": {"kafka": True}}, "kafka"),
])
def test_bad_sources_are_refused(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EventingSpec.model_validate(raw)


def test_sources_are_the_ones_releases_can_load() -> None:
    assert list(EventingSources.model_fields) == list(releases.SOURCE_FILES)
    every = EventingSources.model_validate({name: {} for name in releases.SOURCE_FILES})
    assert sorted(every.enabled_names()) == sorted(releases.SOURCE_FILES)
    # the operator's GetSourcePath order
    assert every.enabled_names() == ["ceph", "github", "gitlab", "kafka", "rabbitmq", "redis"]


def test_sources_are_loaded_after_manifests_too() -> None:
    # The operator appends the enabled sources after a `manifests` list as well (it used
    # to be dropped here without a word).
    assert enabled_sources(ServingSpec()) == []
    assert enabled_sources(EventingSpec(source={"github": {}})) == ["github"]
    assert enabled_sources(EventingSpec(source={"github": {}},
                                        manifests=["https://example.com/e.yaml"])) == ["github"]
