"""The CRDs-first step's provider: create and update record what they applied, an update
is due when a refresh found drift or the state records nothing applied, a refresh adds
the drifted CRDs, and the delete deletes only with `deleteOnDestroy` (the steps
themselves: tests/unit/lifecycle/test_lifecycle_crds_first.py)."""

from __future__ import annotations

from typing import Any

import pytest

from components.crds_first import _Provider
from core.crd_manifest import DELETE_ON_DESTROY
from lifecycle import crds_first as step

APPLIED = {"applied": {"a.x": "d1"}, "selector": "k=v"}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(step, "apply_crds", lambda props: seen.append(("apply", props["crds"]))
                        or dict(APPLIED))
    monkeypatch.setattr(step, "delete_crds", lambda props, names=None: seen.append(
        ("delete", list(props["crds"]) if names is None else list(names))))
    monkeypatch.setattr(step, "read_drift", lambda props: [{"name": "a.x", "change": "changed"}])
    return seen


def _props(**extra: Any) -> dict[str, Any]:
    return {"id": "s:ns/crds-first", "spoke": "s", "crds": ["a.x"], "digest": "sha256:1",
            "manifest": "packed", "connection": {"server": "s"}, **extra}


def test_create_records_what_it_applied_without_the_bodies(calls) -> None:
    got = _Provider().create(_props())
    assert got.id == "s:ns/crds-first" and calls == [("apply", ["a.x"])]
    assert "manifest" not in got.outs and got.outs["applied"] == {"a.x": "d1"}


def test_an_update_is_due_on_drift_or_without_a_record_of_what_was_applied() -> None:
    olds = {k: v for k, v in _props().items() if k != "manifest"} | APPLIED
    assert not _Provider().diff("x", olds, _props()).changes
    assert _Provider().diff("x", {**olds, "drifted": [{"name": "a.x"}]}, _props()).changes
    assert _Provider().diff("x", {k: v for k, v in olds.items() if k != "applied"},
                            _props()).changes
    assert _Provider().diff("x", olds, _props(digest="sha256:2")).changes


def test_an_update_applies_again_and_forgets_the_drift(calls) -> None:
    got = _Provider().update("x", _props(drifted=[{"name": "a.x"}]), _props())
    assert calls == [("apply", ["a.x"])] and "drifted" not in got.outs


def test_an_update_that_deletes_on_destroy_deletes_the_crds_the_release_dropped(calls) -> None:
    _Provider().update("x", _props(crds=["a.x", "old.x"]), _props(**{DELETE_ON_DESTROY: True}))
    assert calls == [("apply", ["a.x"]), ("delete", ["old.x"])]
    calls.clear()
    _Provider().update("x", _props(crds=["a.x", "old.x"]), _props())
    assert calls == [("apply", ["a.x"])]  # kept, as the operator keeps them


def test_a_refresh_names_the_drifted_crds_in_outputs_and_inputs(calls) -> None:
    got = _Provider().read("x", _props() | APPLIED)
    assert got.outs["drifted"] == [{"name": "a.x", "change": "changed"}]
    assert got.outs["applied"] == APPLIED["applied"]
    assert got.inputs is not None and got.inputs["drifted"] == got.outs["drifted"]
    assert "applied" not in got.inputs


def test_a_refresh_without_drift_keeps_the_inputs(monkeypatch) -> None:
    monkeypatch.setattr(step, "read_drift", lambda props: [])
    got = _Provider().read("x", _props() | APPLIED)
    assert got.outs["drifted"] == [] and got.inputs is None


def test_the_delete_keeps_the_crds_unless_the_entry_deletes_them(calls) -> None:
    _Provider().delete("x", _props())
    assert calls == []
    _Provider().delete("x", _props(**{DELETE_ON_DESTROY: True}))
    assert calls == [("delete", ["a.x"])]
