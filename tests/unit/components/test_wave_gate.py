"""The wave gate's wait: polls until healthy, gives up at the timeout, tolerates up to
maxFailures failing spokes (unreachable ones included), and never sleeps for real here."""

from __future__ import annotations

import contextlib

import pytest

from components import membership, wave_gate
from rollout import wave_wait
from targeting.deselected import Deselection
from tests.support.factories import deployment

DEPLOYS = ["knative-serving/controller"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def props(spokes: list[str], max_failures: int = 0, unreachable: dict | None = None) -> dict:
    return {"wave": "canary", "timeoutSeconds": 10, "maxFailures": max_failures,
            "later": ["main"], "unreachable": unreachable or {},
            "spokes": {s: {"connection": {}, "deployments": DEPLOYS} for s in spokes}}


def reader(healthy_after: dict[str, float], clock: Clock):
    def read(spoke: str, _props: dict, _timeout: float) -> dict:
        ok = clock.now >= healthy_after[spoke]
        return {DEPLOYS[0]: deployment(available_status="True" if ok else "False")}
    return read


def test_waits_until_every_spoke_is_healthy() -> None:
    clock = Clock()
    out = wave_wait.await_wave(props(["a", "b"]), reader({"a": 0, "b": 4}, clock),
                               clock, clock.sleep)
    assert out == {"healthy": {"a": True, "b": True}, "failures": {}}
    assert 4 <= clock.now < 10


def test_a_spoke_still_unhealthy_at_the_timeout_fails_the_wave() -> None:
    clock = Clock()
    with pytest.raises(RuntimeError) as err:
        wave_wait.await_wave(props(["a", "b"]), reader({"a": 0, "b": 99}, clock),
                             clock, clock.sleep)
    assert clock.now >= 10
    assert "wave 'canary' is not healthy: 1 spoke(s) failed within 10s" in str(err.value)
    assert "spoke 'b': Deployment knative-serving/controller: Available=False" in str(err.value)


def test_max_failures_tolerates_unhealthy_and_unreachable_spokes() -> None:
    clock = Clock()
    out = wave_wait.await_wave(props(["a", "b"], max_failures=2, unreachable={"c": "gone"}),
                               reader({"a": 0, "b": 99}, clock), clock, clock.sleep)
    assert out["healthy"] == {"a": True, "b": False}
    assert set(out["failures"]) == {"b", "c"}
    with pytest.raises(RuntimeError, match="2 spoke"):
        wave_wait.await_wave(props(["a", "b"], max_failures=1, unreachable={"c": "gone"}),
                             reader({"a": 0, "b": 99}, clock), clock, clock.sleep)


def test_a_read_error_is_that_spokes_failure() -> None:
    clock = Clock()

    def broken(spoke: str, _p: dict, _t: float) -> dict:
        raise ConnectionError("refused")

    with pytest.raises(RuntimeError, match="cannot read its Deployments: ConnectionError"):
        wave_wait.await_wave(props(["a"]), broken, clock, clock.sleep)


def test_the_gate_runs_only_when_its_batch_changed() -> None:
    provider = wave_gate._Provider()
    old = {**props(["a"]), "changes": "d1"}
    assert not provider.diff("canary", old, {**old, "later": []}).changes
    assert provider.diff("canary", old, {**old, "changes": "d2"}).changes


def test_membership_check_refuses_a_deselected_spoke_unless_uninstall(monkeypatch) -> None:
    provider = membership._Provider()
    found = [Deselection("b", "prod", "labels changed", uninstall=False),
             Deselection("c", "prod", "deleted", uninstall=True)]
    monkeypatch.setattr(membership, "deselections", lambda last, now: found)
    result = provider.check({"spokes": {}}, {"spokes": {}})
    assert [f.reason for f in result.failures] == [found[0].message()]
    assert not provider.diff("m", {"spokes": {}, "profiles": {"x": {}}},
                             {"spokes": {}, "profiles": {"x": {"a": "b"}}}).changes


def test_the_reader_keeps_one_client_per_spoke_and_drops_it_on_failure(monkeypatch) -> None:
    opened: list[str] = []
    fail = {"now": False}

    class Api:
        def __init__(self, name: str) -> None:
            self.name = name

    @contextlib.contextmanager
    def fake_client(connection: dict, _timeout: float):
        opened.append(connection["id"])
        yield Api(connection["id"])

    def fake_read(api: Api, deployments: list[str]) -> dict:
        if fail["now"]:
            raise ConnectionError("gone")
        return {d: None for d in deployments}

    monkeypatch.setattr(wave_wait, "spoke_client", fake_client)
    monkeypatch.setattr(wave_wait, "_read", fake_read)
    reader = wave_wait.DeploymentReader()
    spoke = {"connection": {"id": "a"}, "deployments": DEPLOYS}
    for _ in range(3):
        reader("a", spoke, 1.0)
    assert opened == ["a"]  # the exec plugin ran once for three polls
    fail["now"] = True
    with pytest.raises(ConnectionError):
        reader("a", spoke, 1.0)
    fail["now"] = False
    reader("a", spoke, 1.0)
    assert opened == ["a", "a"]  # a fresh client (and credential) after the failure
    reader.close()
