"""The fields one manager applied, read from a live object's managedFields: what the
CRDs-first step digests to tell drift."""

from __future__ import annotations

import copy

from lifecycle.applied_fields import MISSING, applied_digest, owned_fields, project

LIVE = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "a.x", "uid": "u1", "resourceVersion": "7",
        "labels": {"app": "x", "theirs": "y"},
        "managedFields": [
            {"manager": "fleet", "operation": "Apply", "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:group": {}, "f:versions": {
                    'k:{"name":"v1"}': {".": {}, "f:name": {}, "f:served": {}}},
                    "f:names": {"f:categories": {'v:"knative"': {}}}}}},
            {"manager": "fleet", "operation": "Apply", "subresource": "status",
             "fieldsV1": {"f:status": {}}},
            {"manager": "webhook", "operation": "Update", "fieldsV1": {
                "f:spec": {"f:conversion": {}}}},
        ]},
    "spec": {"group": "x", "conversion": {"strategy": "Webhook"},
             "names": {"categories": ["all", "knative"]},
             "versions": [{"name": "v1", "served": True, "storage": True},
                          {"name": "v2", "served": False}]},
    "status": {"conditions": [{"type": "Established", "status": "True"}]},
}


def test_only_the_managers_own_apply_fields_are_read() -> None:
    fields = owned_fields(LIVE, "fleet")
    assert set(fields) == {"f:metadata", "f:spec"}  # not its status, not the webhook's
    assert project(LIVE, fields) == {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"group": "x", "names": {"categories": ["knative"]},
                 "versions": [{"name": "v1", "served": True}]}}


def test_what_others_change_beside_the_fleets_fields_keeps_the_digest() -> None:
    other = copy.deepcopy(LIVE)
    other["metadata"]["resourceVersion"] = "8"
    other["metadata"]["labels"]["theirs"] = "z"
    other["spec"]["conversion"] = {"strategy": "None"}
    other["spec"]["versions"][0]["storage"] = False
    other["spec"]["versions"][1]["served"] = True
    other["status"] = {}
    assert applied_digest(other, "fleet") == applied_digest(LIVE, "fleet")


def test_a_fleet_field_that_changed_or_left_changes_the_digest() -> None:
    changed = copy.deepcopy(LIVE)
    changed["spec"]["versions"][0]["served"] = False
    gone = copy.deepcopy(LIVE)
    gone["spec"]["names"]["categories"] = ["all"]
    taken = copy.deepcopy(LIVE)
    taken["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].pop("f:group")
    digests = {applied_digest(o, "fleet") for o in (LIVE, changed, gone, taken)}
    assert len(digests) == 4
    assert project(gone["spec"]["names"]["categories"], {'v:"knative"': {}}) == [MISSING]


def test_an_object_the_manager_never_applied_has_no_fields_of_it() -> None:
    assert owned_fields(LIVE, "someone") == {}
    assert applied_digest(LIVE, "someone") == applied_digest({"kind": "other"}, "someone")
    assert applied_digest(LIVE, "someone") != applied_digest(LIVE, "fleet")


def test_a_list_item_by_index_and_a_missing_keyed_item() -> None:
    assert project(["a", "b"], {"i:1": {}}) == ["b"]
    assert project(["a"], {"i:3": {}}) == [MISSING]
    assert project([{"name": "v2"}], {'k:{"name":"v1"}': {"f:name": {}}}) == [MISSING]
