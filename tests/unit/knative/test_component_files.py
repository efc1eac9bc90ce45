"""Which files make the install: `manifests` (overwrite mode) and `additionalManifests`
(append mode), the operator's TargetManifest / TargetAdditionalManifest
(pkg/reconciler/common/releases.go); and `source`, which eventing sources are loaded
beside Eventing and where their objects land (pkg/reconciler/knativeeventing/source/
source.go)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from config.fleet import parse_fleet_config
from core.errors import FleetConfigError, TransformError
from knative import releases
from knative.component_files import component_urls, enabled_sources
from knative.plan import InstallPlan
from models.component import EventingSpec, ServingSpec
from models.source import EventingSources
from tests.support.releases import RELEASE_BASE, eventing_plan, serving_plan

BASE = RELEASE_BASE


def entry(**serving: object):
    cfg = parse_fleet_config({"releaseBase": BASE, "fleet": [
        {"name": "s", "clusterProfileRef": {"name": "s", "namespace": "f"},
         "serving": serving}]})
    return cfg.fleet[0]


def _names(plan: InstallPlan, kind: str) -> set[str]:
    return {o["metadata"]["name"] for o in plan.rendered.namespaced if o["kind"] == kind}


# --- manifests, additionalManifests -----------------------------------------------------

def test_manifests_replace_the_release_set_with_version_substituted() -> None:
    core = f"{BASE}/knative/serving/releases/download/knative-v${{VERSION}}/serving-core.yaml"
    kourier = (f"{BASE}/knative-extensions/net-kourier/releases/download/"
               "knative-v${VERSION}/kourier.yaml")
    plan = serving_plan(version="1.23", manifests=[{"URL": core}, kourier])
    deployments = _names(plan, "Deployment")
    assert {"activator", "controller", "webhook", "3scale-kourier-gateway"} <= deployments
    assert "autoscaler-hpa" not in deployments  # serving-hpa.yaml was not listed


def test_manifests_without_the_chosen_ingress_say_which_file_is_missing() -> None:
    core = f"{BASE}/knative/serving/releases/download/knative-v${{VERSION}}/serving-core.yaml"
    with pytest.raises(TransformError, match="load the kourier release file"):
        serving_plan(version="1.23", manifests=[core])


def test_additional_manifests_append_and_replace_same_identity(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "config-logging", "namespace": "knative-serving"},
         "data": {"loglevel.controller": "debug"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "team-extra", "namespace": "knative-serving"},
         "data": {"a": "b"}},
    ]))
    plan = serving_plan(version="1.23", additionalManifests=[str(extra)])
    by_name = {o["metadata"]["name"]: o for o in plan.rendered.namespaced
               if o["kind"] == "ConfigMap"}
    assert by_name["config-logging"]["data"] == {"loglevel.controller": "debug"}
    assert by_name["team-extra"]["data"] == {"a": "b"}
    assert "3scale-kourier-gateway" in _names(plan, "Deployment")
    names = [o["metadata"]["name"] for o in plan.rendered.namespaced]
    assert names.count("config-logging") == 1
    base_plan = serving_plan(version="1.23")
    base_names = [o["metadata"]["name"] for o in base_plan.rendered.namespaced]
    assert names.index("config-logging") == base_names.index("config-logging")


def test_relative_manifest_paths_resolve_against_the_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "mine", "namespace": "knative-serving"}}))
    plan = serving_plan(version="1.23", additionalManifests=["mine.yaml"])
    assert "mine" in _names(plan, "ConfigMap")


@pytest.mark.parametrize(("value", "needle"), [
    ([], "at least one file"),
    (["ftp://mirror/serving.yaml"], "https://, http:// or file://"),
    ([{"URL": ""}], "URL"),
    ([{"path": "x.yaml"}], "path"),
])
def test_bad_manifest_lists_are_refused(value: object, needle: str) -> None:
    with pytest.raises(FleetConfigError) as err:
        entry(version="1.23", manifests=value)
    assert needle in str(err.value) and "serving.manifests" in str(err.value)


def test_release_files_then_additional_ones_with_the_version_substituted() -> None:
    spec = ServingSpec(additionalManifests=["https://example.com/v${VERSION}/extra.yaml"])
    urls = component_urls("serving", spec, BASE, "1.23.0", "kourier")
    assert urls[-1] == "https://example.com/v1.23.0/extra.yaml"
    assert urls[:-1] == releases.release_urls(BASE, "serving", "1.23.0")


# --- source -----------------------------------------------------------------------------

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
