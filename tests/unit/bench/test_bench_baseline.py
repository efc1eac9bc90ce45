"""The kubectl baseline takes its objects and their order from the plan's stages: what
kubectl applies is what knative-fleet registers, in the same order."""

from __future__ import annotations

from types import SimpleNamespace

from bench.kubectl import baseline_of, differing_objects, render_baseline
from bench.own_lab import bench_entry
from config.fleet import parse_fleet_config
from knative import plan as planning
from knative.plan import InstallStage, Stage
from lab.paths import RELEASES


def obj(kind: str, name: str, namespace: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": kind, "metadata": meta}


def fake_plan(ns: str) -> SimpleNamespace:
    anchor = obj("ConfigMap", f"{ns}-root-owner", ns)
    return SimpleNamespace(stages=(
        InstallStage(Stage.NAMESPACE, (obj("Namespace", ns),), (), False),
        InstallStage(Stage.CRDS, (obj("CustomResourceDefinition", f"things.{ns}.dev"),),
                     (Stage.NAMESPACE,), False),
        InstallStage(Stage.CLUSTER, (obj("ClusterRole", f"{ns}-admin"),),
                     (Stage.NAMESPACE,), False),
        InstallStage(Stage.CLUSTER_CUSTOM, (), (Stage.CRDS,), False),
        InstallStage(Stage.ANCHOR, (anchor,), (Stage.CLUSTER, Stage.CLUSTER_CUSTOM), False),
        InstallStage(Stage.NAMESPACED, (obj("ConfigMap", "config", ns),), (Stage.ANCHOR,),
                     True),
        InstallStage(Stage.DEPLOYMENTS, (obj("Deployment", "controller", ns),),
                     (Stage.ANCHOR,), True),
        InstallStage(Stage.CUSTOM, (obj("Thing", "default", ns),), (Stage.DEPLOYMENTS,),
                     True),
    ))


def test_unowned_stages_first_owned_stages_second() -> None:
    base = baseline_of([fake_plan("a"), fake_plan("b")])
    assert [o["metadata"]["name"] for o in base.first] == [
        "a", "things.a.dev", "a-admin", "a-root-owner",
        "b", "things.b.dev", "b-admin", "b-root-owner"]
    assert [(a, o["kind"]) for a, o in base.owned] == [
        ("a-root-owner", "ConfigMap"), ("a-root-owner", "Deployment"), ("a-root-owner", "Thing"),
        ("b-root-owner", "ConfigMap"), ("b-root-owner", "Deployment"), ("b-root-owner", "Thing")]
    assert base.crds == ["things.a.dev", "things.b.dev"]
    assert base.anchors == [("a", "a-root-owner"), ("b", "b-root-owner")]
    assert base.deployments == {"a": ["controller"], "b": ["controller"]}
    assert base.count == 14


def test_baseline_of_the_release_mirror() -> None:
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                              "fleet": [bench_entry("spoke-2")]})
    entry = cfg.fleet[0]
    plans = planning.plan_spoke(entry.serving, entry.eventing, cfg.release_base, {})
    base = render_baseline(entry, cfg.release_base)
    rendered = [p.rendered for p in plans]
    assert base.count == sum(
        2 + len(p.reads) + len(p.rendered.crds) + len(p.rendered.cluster_scoped)
        + len(p.rendered.external) + len(p.rendered.namespaced)
        for p in plans)  # + namespace + anchor (+ Secret reads) per component
    assert base.crds == [c["metadata"]["name"] for r in rendered for c in r.crds]
    assert base.anchors == [(p.namespace, p.anchor["metadata"]["name"]) for p in plans]
    assert [o["kind"] for o in base.first[:4]] == ["Namespace", "Role", "RoleBinding",
                                               "CustomResourceDefinition"]
    for plan in plans:
        names = [o["metadata"]["name"] for o in plan.rendered.namespaced
                 if o["kind"] == "Deployment"]
        assert sorted(base.deployments[plan.namespace]) == sorted(names)
    anchors = {name for _, name in base.anchors}
    assert {a for a, _ in base.owned} == anchors
    assert all("namespace" in o["metadata"] for _, o in base.owned)


def test_differing_objects_from_kubectl_diff() -> None:
    out = ("diff -u -N /tmp/LIVE-1/rbac.authorization.k8s.io.v1.ClusterRole..x "
           "/tmp/MERGED-1/rbac.authorization.k8s.io.v1.ClusterRole..x\n"
           "--- /tmp/LIVE-1/...\n+++ ...\n")
    assert differing_objects(out) == ["rbac.authorization.k8s.io.v1.ClusterRole..x"]
