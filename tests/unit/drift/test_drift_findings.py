"""Drift read from recorded refresh previews of the lab: each hand edit with its spoke,
object and field; untouched objects and the fleet's own resources never reported."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.resource_types import CLUSTER_RBAC, NAMESPACED_OBJECTS
from drift.__main__ import main
from drift.findings import CHANGED, DELETED, findings, value_at, with_refreshed
from review import preview

RECORDED = Path(__file__).resolve().parents[2] / "support" / "refresh_previews"


def recorded(name: str) -> dict:
    return json.loads(gzip.decompress((RECORDED / f"{name}.json.gz").read_bytes()))


def test_three_hand_edits_each_with_spoke_object_and_field() -> None:
    report = findings(recorded("three-hand-edits"))
    got = {(d.spoke, d.object, d.change, d.fields) for d in report.drifts}
    assert got == {
        ("spoke-1", "ConfigMap knative-serving/config-features", DELETED, ()),
        ("spoke-1", "Deployment knative-serving/autoscaler", CHANGED, ("spec.replicas",)),
        ("spoke-1", "ConfigMap knative-serving/config-deployment", CHANGED,
         ("data.queue-sidecar-image",)),
    }
    scaled = next(d for d in report.drifts if d.name == "autoscaler")
    assert scaled.values == (("spec.replicas", "1", "3"),)
    assert scaled.line() == ("spoke-1: Deployment knative-serving/autoscaler changed: "
                             "spec.replicas (applied 1, live 3)")
    assert report.by_spoke()["spoke-2"] == []


def test_an_untouched_stack_has_no_drift() -> None:
    report = findings(recorded("clean"))
    assert report.drifts == [] and sum(report.checked.values()) > 0


def test_value_at_reads_detailed_diff_paths() -> None:
    obj = {"spec": {"containers": [{"image": "a"}]},
           "metadata": {"labels": {"app.kubernetes.io/name": "x"}}}
    assert value_at(obj, "spec.containers[0].image") == "a"
    assert value_at(obj, 'metadata.labels["app.kubernetes.io/name"]') == "x"
    assert value_at(obj, "spec.containers[3].image") is not None  # the missing marker


def test_a_refresh_that_could_not_run_exits_2(tmp_path, capsys) -> None:
    """pulumi failing before the engine ran (no stack, no login): no JSON on stdout."""
    source = tmp_path / "in.json"
    source.write_text(json.dumps(preview.parse("", "error: no stack named 's'", 255)))
    assert main(["--stack", "s", "--from-json", str(source), "--out", str(tmp_path)]) == 2
    assert "no stack named 's'" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "code"), [("three-hand-edits", 1), ("clean", 0)])
def test_exit_code_says_whether_there_is_drift(tmp_path, capsys, name, code) -> None:
    source = RECORDED / f"{name}.json.gz"
    assert main(["--stack", "s", "--from-json", str(source), "--out", str(tmp_path)]) == code
    written = json.loads((tmp_path / "drift.json").read_text())
    assert len(written["drift"]) == (3 if code else 0)
    out = capsys.readouterr().out
    assert ("Repair: pulumi up --refresh --stack s" in out) is bool(code)


def _crds_first_step(op: str, drifted: list[dict] | None) -> dict:
    urn = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$"
           "pulumi-python:dynamic/knative-fleet:CustomResourceDefinitionsFirst::"
           "spoke-1:knative-serving/crds-first")
    old = {"type": "pulumi-python:dynamic/knative-fleet:CustomResourceDefinitionsFirst",
           "outputs": {"crds": ["a.serving.knative.dev", "b.serving.knative.dev"],
                       "applied": {"a.serving.knative.dev": "1", "b.serving.knative.dev": "2"}}}
    new = {**old, "outputs": {**old["outputs"], "drifted": drifted}}
    return {"op": op, "urn": urn, "oldState": old, "newState": new}


def test_the_crds_a_crds_first_step_holds_are_checked_and_drift_named() -> None:
    report = findings({"steps": [_crds_first_step("update", [
        {"name": "a.serving.knative.dev", "change": "changed"},
        {"name": "b.serving.knative.dev", "change": "deleted"}])]})
    assert report.checked == {"spoke-1": 2}
    assert [d.line() for d in report.drifts] == [
        "spoke-1: CustomResourceDefinition a.serving.knative.dev changed: "
        "the fields the fleet applied",
        "spoke-1: CustomResourceDefinition b.serving.knative.dev was deleted"]


def test_a_crds_first_step_without_drift_counts_its_crds_only() -> None:
    report = findings({"steps": [_crds_first_step("same", [])]})
    assert report.checked == {"spoke-1": 2} and report.drifts == []


def test_a_crds_first_steps_refresh_is_taken_from_the_event_log() -> None:
    """The document keeps a refresh's result only with a detailed diff, which a dynamic
    provider cannot give: the engine's event log has what the refresh read."""
    step = _crds_first_step("refresh", None)
    step["newState"] = step["oldState"]
    new = {**step["oldState"], "outputs": {**step["oldState"]["outputs"], "drifted": [
        {"name": "a.serving.knative.dev", "change": "changed"}]}}
    events = [json.dumps({"resOutputsEvent": {"metadata": {
        "urn": step["urn"], "type": step["oldState"]["type"], "op": "update", "new": new}}}),
        "not json", json.dumps({"resOutputsEvent": {"metadata": {
            "urn": "other", "type": step["oldState"]["type"], "op": "update"}}})]
    doc = with_refreshed({"steps": [step]}, events)
    assert doc["steps"][0]["op"] == "update"
    report = findings(doc)
    assert [d.name for d in report.drifts] == ["a.serving.knative.dev"]
    assert findings(with_refreshed({"steps": [_crds_first_step("refresh", None)]}, [])
                    ).drifts == []


def test_the_objects_a_cluster_rbac_step_holds_are_checked_and_drift_named() -> None:
    """A ClusterRbac refresh: each object it holds counted as checked, each drifted one
    named by its kind and name (`Kind/name` in the step's `drifted`)."""
    urn = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$"
           f"{CLUSTER_RBAC.type}::spoke-1:knative-serving/cluster-rbac")
    old = {"type": CLUSTER_RBAC.type, "outputs": {
        "objects": ["ClusterRole/x", "ClusterRoleBinding/y", "ClusterRoleBinding/x"],
        "applied": {"ClusterRole/x": "1", "ClusterRoleBinding/y": "2",
                    "ClusterRoleBinding/x": "3"}}}
    new = {**old, "outputs": {**old["outputs"], "drifted": [
        {"name": "ClusterRole/x", "change": "changed"},
        {"name": "ClusterRoleBinding/y", "change": "deleted"}]}}
    report = findings({"steps": [{"op": "update", "urn": urn, "oldState": old,
                                  "newState": new}]})
    assert report.checked == {"spoke-1": 3}
    assert [(d.spoke, d.kind, d.namespace, d.name, d.change) for d in report.drifts] == [
        ("spoke-1", "ClusterRole", "", "x", CHANGED),
        ("spoke-1", "ClusterRoleBinding", "", "y", DELETED)]
    assert [d.line() for d in report.drifts] == [
        "spoke-1: ClusterRole x changed: the fields the fleet applied",
        "spoke-1: ClusterRoleBinding y was deleted"]


def test_the_objects_a_namespaced_objects_step_holds_are_named_with_their_namespace() -> None:
    """A NamespacedObjects refresh: each drifted object named by kind, namespace and name
    (`Kind/namespace/name` in the step's `drifted`)."""
    urn = ("urn:pulumi:s::knative-fleet::knative-fleet:index:Spoke$"
           f"{NAMESPACED_OBJECTS.type}::spoke-1:knative-serving/namespaced-objects")
    old = {"type": NAMESPACED_OBJECTS.type, "outputs": {
        "objects": ["ServiceAccount/knative-serving/controller",
                    "Service/knative-serving/activator-service"]}}
    new = {**old, "outputs": {**old["outputs"], "drifted": [
        {"name": "Service/knative-serving/activator-service", "change": "deleted"}]}}
    report = findings({"steps": [{"op": "update", "urn": urn, "oldState": old,
                                  "newState": new}]})
    assert report.checked == {"spoke-1": 2}
    assert [(d.kind, d.namespace, d.name, d.change) for d in report.drifts] == [
        ("Service", "knative-serving", "activator-service", DELETED)]
    assert [d.line() for d in report.drifts] == [
        "spoke-1: Service knative-serving/activator-service was deleted"]
