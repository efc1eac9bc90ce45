"""The wave gate's provider: it runs the wait (lifecycle.wave_gate) on create and update
and records its verdict with the inputs, and runs only when its batch changed."""

from __future__ import annotations

from typing import Any

import pytest

from components import wave_gate
from lifecycle import wave_gate as lifecycle_wave

DEPLOYS = ["knative-serving/controller"]


def props(spokes: list[str]) -> dict:
    return {"wave": "canary", "timeoutSeconds": 10, "maxFailures": 0,
            "later": ["main"], "unreachable": {},
            "spokes": {s: {"connection": {}, "deployments": DEPLOYS} for s in spokes}}


def test_the_gate_runs_only_when_its_batch_changed() -> None:
    provider = wave_gate._Provider()
    old = {**props(["a"]), "changes": "d1"}
    assert not provider.diff("canary", old, {**old, "later": []}).changes
    assert provider.diff("canary", old, {**old, "changes": "d2"}).changes


def test_create_and_update_record_the_waits_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    waited: list[dict[str, Any]] = []
    verdict = {"healthy": {"a": True}, "failures": {}}

    def await_wave(p: dict[str, Any]) -> dict[str, Any]:
        waited.append(p)
        return verdict

    monkeypatch.setattr(lifecycle_wave, "await_wave", await_wave)
    provider = wave_gate._Provider()
    old = {**props(["a"]), "changes": "d1", "healthy": None, "failures": None}
    created = provider.create(old)
    assert created.id == "canary" and created.outs == {**old, **verdict}
    new = {**old, "changes": "d2"}
    assert provider.update("canary", old, new).outs == {**new, **verdict}
    assert waited == [old, new]
