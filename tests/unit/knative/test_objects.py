"""The shared object helpers of knative/objects.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.errors import TransformError
from knative.manifests import Rendered
from knative.objects import (
    all_containers,
    all_objects,
    by_name,
    defined_kinds,
    dig,
    find,
    group,
    group_kind,
    named_objects,
    not_in_release,
    of_kind,
    pod_spec,
    pod_template_spec,
    require,
    upsert_by_name,
    workload_matches,
)


def obj(api_version: str, kind: str, name: str, **fields: object) -> dict:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **fields}


def test_dig_stops_at_what_is_missing() -> None:
    assert dig({"a": {"b": {"c": 1}}}, ("a", "b", "c")) == 1
    assert dig({"a": {"b": None}}, ("a", "b", "c")) is None
    assert dig({"a": [1]}, ("a", "b")) is None
    assert dig({"a": 1}, None) is None


def test_group_of_core_and_named_api_versions() -> None:
    assert group("v1") == ""
    assert group("apps/v1") == "apps"
    assert group_kind(obj("networking.istio.io/v1beta1", "Gateway", "g")) == (
        "networking.istio.io", "Gateway")


def test_defined_kinds_of_crds() -> None:
    crd = {"spec": {"group": "serving.knative.dev", "names": {"kind": "Service"}}}
    assert defined_kinds([crd]) == {("serving.knative.dev", "Service")}


@pytest.mark.parametrize(("kind", "path"), [
    ("Deployment", ("spec", "template", "spec")), ("Job", ("spec", "template", "spec")),
    ("CronJob", ("spec", "jobTemplate", "spec", "template", "spec")), ("Pod", ("spec",))])
def test_pod_spec_per_kind(kind: str, path: tuple[str, ...]) -> None:
    spec = {"containers": [{"name": "c"}]}
    nested: dict = spec
    for key in reversed(path):
        nested = {key: nested}
    assert pod_spec({"kind": kind, **nested}) is spec
    assert pod_spec({"kind": "ConfigMap", **nested}) is None


def test_pod_template_spec_is_created_where_missing() -> None:
    deployment: dict = {"kind": "Deployment"}
    pod_template_spec(deployment)["containers"] = []
    assert deployment == {"kind": "Deployment", "spec": {"template": {"spec": {"containers": []}}}}


def test_all_containers_init_first() -> None:
    assert all_containers({"containers": [{"name": "b"}], "initContainers": [{"name": "a"}]}) \
        == [{"name": "a"}, {"name": "b"}]


def test_upsert_replaces_by_name_or_appends() -> None:
    parent = {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
    upsert_by_name(parent, "env", {"name": "A", "value": "3"})
    upsert_by_name(parent, "env", {"name": "C", "value": "4"})
    assert parent["env"] == [{"name": "A", "value": "3"}, {"name": "B", "value": "2"},
                             {"name": "C", "value": "4"}]
    empty: dict = {"env": None}
    upsert_by_name(empty, "env", {"name": "A"})
    assert empty == {"env": [{"name": "A"}]}


def rendered() -> Rendered:
    return Rendered(
        crds=[], cluster_scoped=[obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r")],
        namespaced=[obj("v1", "Service", "a"), obj("v1", "ConfigMap", "a"),
                    obj("networking.istio.io/v1beta1", "Gateway", "g")],
        namespaces_dropped=[],
        external=[obj("v1", "Service", "b"), obj("gateway.networking.k8s.io/v1", "Gateway", "g")])


def test_all_objects_and_of_kind_are_namespaced_then_pinned() -> None:
    names = [(o["kind"], o["metadata"]["name"]) for o in all_objects(rendered())]
    assert names[0] == ("Service", "a") and names[-1] == ("Gateway", "g")
    assert len(names) == 5
    assert [o["metadata"]["name"] for o in of_kind(rendered(), "Service")] == ["a", "b"]


def test_find_by_kind_name_and_group() -> None:
    objects = list(all_objects(rendered()))
    assert find(objects, "ConfigMap", "a") is objects[1]
    assert find(objects, "Gateway", "g")["apiVersion"].startswith("networking.istio.io")
    assert find(objects, "Gateway", "g", "gateway.networking.k8s.io")["apiVersion"] == \
        "gateway.networking.k8s.io/v1"
    assert find(objects, "ConfigMap", "b") is None


def test_require_names_why_and_the_hint() -> None:
    with pytest.raises(TransformError, match="^x.y changes the ConfigMap 'b', which this "
                                             "release does not have; check it$"):
        require(rendered().namespaced, "ConfigMap", "b", why="x.y", hint="check it")


def test_by_name_keeps_the_last_of_a_name() -> None:
    first, last = obj("v1", "Service", "a", n=1), obj("v1", "Service", "a", n=2)
    assert by_name([first, obj("v1", "ConfigMap", "a"), last], "Service") == {"a": last}


def test_workload_matches_names_and_job_generate_names() -> None:
    assert workload_matches("controller", "controller", "Deployment")
    assert workload_matches("migrate-", "migrate-serving-1.23.0", "Job")
    assert not workload_matches("migrate-", "migrate-serving-1.23.0", "Deployment")
    assert not workload_matches("migrate", "migrate-serving-1.23.0", "Job")


@dataclass
class Override:
    name: str


def test_named_objects_pairs_each_override_or_lists_the_known_names() -> None:
    (pair,) = named_objects(rendered(), "Service", [Override("b")], "services")
    assert pair[1]["metadata"]["name"] == "b"
    with pytest.raises(TransformError, match="services names 'c', which this release does "
                                             "not have; known: a, b"):
        named_objects(rendered(), "Service", [Override("b"), Override("c")], "services")


def test_not_in_release_with_a_hint_and_without_names() -> None:
    assert str(not_in_release("workloads", "x", [], hint=" (hint)")) == \
        "workloads names 'x', which this release does not have (hint); known: (none)"
