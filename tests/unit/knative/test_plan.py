"""What one entry plans: the version step rule and which files make the install."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from config.fleet import parse_fleet_config
from core.errors import FleetConfigError, TransformError
from knative import plan as planning
from lab.paths import RELEASES

BASE = f"file://{RELEASES}"


def entry(**serving: object):
    cfg = parse_fleet_config({"releaseBase": BASE, "fleet": [
        {"name": "s", "clusterProfileRef": {"name": "s", "namespace": "f"},
         "serving": serving}]})
    return cfg.fleet[0]


def serving_plan(installed: str | None = None, **serving: object) -> planning.InstallPlan:
    installed_map = {"knative-serving": installed} if installed else {}
    return planning.plan_spoke(entry(**serving), BASE, {}, installed_map)[0]


@pytest.mark.parametrize(("installed", "target"), [
    (None, "1.23"), ("1.22.1", "1.23"), ("1.23.0", "1.22"), ("1.23.0", "1.23.0")])
def test_one_minor_step_or_none_is_allowed(installed: str | None, target: str) -> None:
    assert serving_plan(installed, version=target).version.startswith(target)


@pytest.mark.parametrize(("installed", "target", "word"), [
    ("1.21.0", "1.23", "upgrade"), ("1.25.3", "1.23", "downgrade"),
    ("0.23.0", "1.23", "upgrade")])
def test_more_than_one_minor_step_is_refused_with_the_way_forward(
        installed: str, target: str, word: str) -> None:
    with pytest.raises(TransformError) as err:
        serving_plan(installed, version=target)
    message = str(err.value)
    assert installed in message and word in message and "allowMinorSkip" in message


def test_an_entry_may_accept_a_bigger_step() -> None:
    plan = serving_plan("1.21.0", version="1.23", allowMinorSkip=True)
    assert plan.version == "1.23.0"


def test_version_step_check_runs_per_component() -> None:
    cfg = parse_fleet_config({"releaseBase": BASE, "fleet": [
        {"name": "s", "clusterProfileRef": {"name": "s", "namespace": "f"},
         "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}]})
    with pytest.raises(TransformError, match="eventing runs 1.21.0"):
        planning.plan_spoke(cfg.fleet[0], BASE, {}, {"knative-eventing": "1.21.0",
                                                      "knative-serving": "1.22.1"})


def _names(plan: planning.InstallPlan, kind: str) -> set[str]:
    return {o["metadata"]["name"] for o in plan.rendered.namespaced if o["kind"] == kind}


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


def eventing_plan(**eventing: object) -> planning.InstallPlan:
    cfg = parse_fleet_config({"releaseBase": BASE, "fleet": [
        {"name": "s", "clusterProfileRef": {"name": "s", "namespace": "f"},
         "eventing": {"version": "1.23", **eventing}}]})
    return planning.plan_spoke(cfg.fleet[0], BASE, {})[0]


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
