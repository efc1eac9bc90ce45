"""Field diffs: Pulumi's paths read and written back, lists matched as sequences,
Secret data never shown."""

from __future__ import annotations

from review.fields import FieldChange, format_path, object_diff, parse_path


def test_paths_round_trip_in_pulumis_syntax() -> None:
    for path in ['data.domain-template', 'metadata.labels["app.kubernetes.io/version"]',
                 'spec.template.spec.containers[0].image', 'data["envoy-bootstrap.yaml"]']:
        assert format_path(parse_path(path)) == path
    assert parse_path('a["b.c"][2].d') == ["a", "b.c", 2, "d"]


def test_an_inserted_list_item_is_one_added_item() -> None:
    old = {"type": "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
           "inputs": {"rules": [{"r": "a"}, {"r": "b"}]}}
    new = {**old, "inputs": {"rules": [{"r": "a"}, {"r": "x"}, {"r": "b"}]}}
    got = object_diff(old, new, {"rules[1]": {"kind": "update"},
                                 "rules[2]": {"kind": "add"}})
    assert got == [FieldChange("rules[1]", "add", new={"r": "x"})]


def test_a_null_detailed_diff_diffs_the_inputs() -> None:
    old = {"type": "pulumi-python:dynamic/knative-fleet:FleetMembership",
           "inputs": {"selection": "1 spokes", "spokes": {"a": 1}}}
    new = {**old, "inputs": {"selection": "2 spokes", "spokes": {"a": 1, "b": 2}}}
    assert object_diff(old, new, None) == [
        FieldChange("selection", "update", "1 spokes", "2 spokes"),
        FieldChange("spokes.b", "add", new=2)]


def test_replacing_paths_are_marked() -> None:
    old = {"type": "kubernetes:batch/v1:Job", "inputs": {"spec": {"image": "a"}}}
    new = {**old, "inputs": {"spec": {"image": "b"}}}
    got = object_diff(old, new, {"spec.image": {"kind": "update-replace"}})
    assert got == [FieldChange("spec.image", "update-replace", "a", "b")]


def test_secret_data_is_masked() -> None:
    old = {"type": "kubernetes:core/v1:Secret", "inputs": {"data": {"k": "c2VjcmV0"}}}
    new = {**old, "inputs": {"data": {"k": "b3RoZXI="}}}
    assert object_diff(old, new, None) == [
        FieldChange("data.k", "update", "[secret]", "[secret]")]
