"""What one spoke plans: one plan per component named, the version step per component,
the spec applied through the transform index, and the stages the plan registers in."""

from __future__ import annotations

import pytest

from core.errors import TransformError
from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from knative import plan as planning
from knative.manifests import Rendered
from models.component import EventingSpec, ServingSpec
from tests.support.releases import RELEASE_BASE as BASE
from tests.support.releases import serving


def test_version_step_check_runs_per_component() -> None:
    with pytest.raises(TransformError, match="eventing runs 1.21.0"):
        planning.plan_spoke(ServingSpec(version="1.23"), EventingSpec(version="1.23"), BASE,
                            {}, {"knative-eventing": "1.21.0", "knative-serving": "1.22.1"})


def test_one_plan_per_component_named() -> None:
    assert [p.component for p in planning.plan_spoke(ServingSpec(), EventingSpec(), BASE,
                                                     {})] == ["serving", "eventing"]
    assert [p.component for p in planning.plan_spoke(None, EventingSpec(), BASE, {})] == [
        "eventing"]
    assert planning.plan_spoke(None, None, BASE, {}) == []


def test_an_existing_namespace_is_ours_only_with_our_label() -> None:
    ours = {"knative-serving": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}
    (plan,) = planning.plan_spoke(ServingSpec(), None, BASE, ours)
    assert plan.namespace_object is not None
    (plan,) = planning.plan_spoke(ServingSpec(), None, BASE, {"knative-serving": {}})
    assert plan.namespace_object is None


def test_customize_runs_every_transform_of_the_index_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def recorder(name: str):
        def transform(rendered, spec):
            calls.append(name)
            return rendered
        return transform

    monkeypatch.setattr(planning, "TRANSFORMS", (recorder("a"), recorder("b"), recorder("c")))
    rendered = serving()
    assert planning.customize(rendered, ServingSpec()) is rendered
    assert calls == ["a", "b", "c"]


# --- stages -------------------------------------------------------------------------------

def _o(api_version: str, kind: str, name: str, namespace: str | None = None,
       **fields: object) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def _crd(kind: str, scope: str) -> dict:
    return _o("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{kind.lower()}s.x.dev",
              spec={"group": "x.dev", "names": {"kind": kind}, "scope": scope})


def synthetic_plan(namespace_existed: bool = False) -> planning.InstallPlan:
    ns = "knative-serving"
    rendered = Rendered(
        crds=[_crd("Thing", "Cluster"), _crd("Widget", "Namespaced")],
        cluster_scoped=[_o("x.dev/v1", "Thing", "t1"),
                        _o("rbac.authorization.k8s.io/v1", "ClusterRole", "role"),
                        _o("y.dev/v1", "Thing", "other-group")],
        namespaced=[_o("v1", "ConfigMap", "c", ns), _o("x.dev/v1", "Widget", "w", ns),
                    _o("apps/v1", "Deployment", "d", ns), _o("v1", "Service", "s", ns)],
        namespaces_dropped=[],
        external=[_o("v1", "Service", "knative-local-gateway", "istio-system")])
    return planning.InstallPlan(
        component="serving", kind="KnativeServing", cr_name="knative-serving", namespace=ns,
        version="1.23.0",
        namespace_object=None if namespace_existed else _o("v1", "Namespace", ns),
        anchor=_o("v1", "ConfigMap", "anchor", ns),
        reads=(_o("rbac.authorization.k8s.io/v1", "RoleBinding", "reads", ns),),
        rendered=rendered, delete_crds=False)


def _names(stage: planning.Stage) -> list[str]:
    return [o["metadata"]["name"] for o in stage.objects]


def test_stages_order_dependencies_and_ownership() -> None:
    stages = synthetic_plan().stages
    assert [(s.name, s.after, s.owned) for s in stages] == [
        ("namespace", (), False),
        ("reads", ("namespace",), False),
        ("crds", ("namespace",), False),
        ("cluster", ("namespace",), False),
        ("cluster-custom", ("crds",), False),
        ("anchor", ("namespace", "reads", "crds", "cluster", "cluster-custom"), False),
        ("namespaced", ("anchor",), True),
        ("deployments", ("anchor",), True),
        ("custom", ("anchor", "deployments"), True),
    ]


def test_stages_split_objects_by_the_kinds_the_release_crds_define() -> None:
    stages = {s.name: _names(s) for s in synthetic_plan().stages}
    assert stages == {
        "namespace": ["knative-serving"],
        "reads": ["reads"],
        "crds": ["things.x.dev", "widgets.x.dev"],
        # Another group's Thing is not this release's kind; pinned objects come last.
        "cluster": ["role", "other-group", "knative-local-gateway"],
        "cluster-custom": ["t1"],
        "anchor": ["anchor"],
        "namespaced": ["c", "s"],
        "deployments": ["d"],
        "custom": ["w"],
    }


def test_a_namespace_that_existed_is_an_empty_stage() -> None:
    (namespace, *_) = synthetic_plan(namespace_existed=True).stages
    assert namespace.name == "namespace" and namespace.objects == ()


def test_stages_hold_every_object_of_a_real_plan_once() -> None:
    (plan,) = planning.plan_spoke(ServingSpec(), None, BASE, {})
    rendered = plan.rendered
    staged = [o for s in plan.stages for o in s.objects]
    assert plan.reads  # Serving's release holds Secrets
    expected = [plan.namespace_object, *plan.reads, *rendered.crds, *rendered.cluster_scoped,
                *rendered.external, plan.anchor, *rendered.namespaced]
    assert sorted(map(id, staged)) == sorted(map(id, expected))
    stages = {s.name: s for s in plan.stages}
    assert {o["kind"] for o in stages["deployments"].objects} == {"Deployment"}
    assert "Deployment" not in {o["kind"] for o in stages["namespaced"].objects}
    # Serving's caching Image is a kind of its own CRDs: it waits for the Deployments.
    assert ("Image", "queue-proxy") in {(o["kind"], o["metadata"]["name"])
                                        for o in stages["custom"].objects}
    assert stages["cluster-custom"].objects == ()
