"""The cluster-RBAC step's provider: create and update record what they applied without
the bodies, an update is due when the objects or their digest change or a refresh found
drift, an update deletes the objects that left, a refresh adds the drifted objects, and
the delete deletes them all (the steps themselves:
tests/unit/lifecycle/test_lifecycle_held_objects.py)."""

from __future__ import annotations

from typing import Any

import pytest

from components.held_objects import _ClusterRbacProvider as _Provider
from lifecycle import held_objects as step

APPLIED = {"applied": {"ClusterRole/a": "d1", "ClusterRoleBinding/a": "d2"}, "selector": "k=v"}
DRIFTED = [{"name": "ClusterRole/a", "change": "changed"}]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, Any]]:
    seen: list[tuple[str, Any, Any]] = []

    def apply_objects(props: dict, gone: Any = ()) -> dict:
        seen.append(("apply", props["objects"], list(gone)))
        return dict(APPLIED)

    monkeypatch.setattr(step, "apply_objects", apply_objects)
    monkeypatch.setattr(step, "delete_objects",
                        lambda props: seen.append(("delete", props["objects"], None)))
    monkeypatch.setattr(step, "read_drift", lambda props: list(DRIFTED))
    return seen


def _props(**extra: Any) -> dict[str, Any]:
    return {"id": "s:ns/cluster-rbac", "spoke": "s",
            "objects": ["ClusterRole/a", "ClusterRoleBinding/a"], "digest": "sha256:1",
            "manifest": "packed", "connection": {"server": "s"}, **extra}


def _outs(**extra: Any) -> dict[str, Any]:
    """The state's outputs after a create of _props(**extra)."""
    return {k: v for k, v in _props(**extra).items() if k != "manifest"} | APPLIED


def test_the_outputs_are_the_inputs_without_the_bodies() -> None:
    assert _Provider().outs(_props()) == {k: v for k, v in _props().items() if k != "manifest"}


def test_create_applies_and_records_what_it_applied_without_the_bodies(calls) -> None:
    got = _Provider().create(_props())
    assert got.id == "s:ns/cluster-rbac"
    assert calls == [("apply", ["ClusterRole/a", "ClusterRoleBinding/a"], [])]
    assert "manifest" not in got.outs
    assert got.outs["applied"] == APPLIED["applied"] and got.outs["selector"] == "k=v"
    assert got.outs["digest"] == "sha256:1"


def test_no_update_is_due_when_nothing_changed() -> None:
    assert not _Provider().diff("x", _outs(), _props()).changes
    assert not _Provider().diff("x", _outs(drifted=[]), _props()).changes


@pytest.mark.parametrize("olds, news", [
    (_outs(), _props(digest="sha256:2")),
    (_outs(), _props(objects=["ClusterRole/a"])),
    (_outs(drifted=DRIFTED), _props()),
    (_outs(), _props(drifted=DRIFTED)),
], ids=["digest", "objects", "drift in the state", "drift in the inputs"])
def test_an_update_is_due_on_a_change_of_the_objects_or_on_drift(olds, news) -> None:
    got = _Provider().diff("x", olds, news)
    assert got.changes and not got.replaces


def test_an_update_deletes_the_objects_that_left(calls) -> None:
    got = _Provider().update(
        "x", _outs(objects=["ClusterRole/a", "ClusterRoleBinding/old", "ClusterRole/old"]),
        _props(objects=["ClusterRole/a", "ClusterRole/new"]))
    assert calls == [("apply", ["ClusterRole/a", "ClusterRole/new"],
                      ["ClusterRole/old", "ClusterRoleBinding/old"])]
    assert got.outs["objects"] == ["ClusterRole/a", "ClusterRole/new"]
    assert "manifest" not in got.outs and got.outs["applied"] == APPLIED["applied"]


def test_an_update_applies_again_and_forgets_the_drift(calls) -> None:
    got = _Provider().update("x", _outs(drifted=DRIFTED), _props())
    assert calls == [("apply", ["ClusterRole/a", "ClusterRoleBinding/a"], [])]
    assert "drifted" not in got.outs


def test_a_refresh_names_the_drifted_objects_in_outputs_and_inputs(calls) -> None:
    got = _Provider().read("x", _outs())
    assert got.id == "x"
    assert got.outs["drifted"] == DRIFTED and got.outs["applied"] == APPLIED["applied"]
    assert got.inputs is not None and got.inputs["drifted"] == DRIFTED
    assert "applied" not in got.inputs and "selector" not in got.inputs
    assert got.inputs["objects"] == _outs()["objects"]


def test_a_refresh_without_drift_keeps_the_inputs(monkeypatch) -> None:
    monkeypatch.setattr(step, "read_drift", lambda props: [])
    got = _Provider().read("x", _outs())
    assert got.outs["drifted"] == [] and got.inputs is None
    assert got.outs["applied"] == APPLIED["applied"]


def test_the_delete_deletes_every_object(calls) -> None:
    _Provider().delete("x", _outs())
    assert calls == [("delete", ["ClusterRole/a", "ClusterRoleBinding/a"], None)]
