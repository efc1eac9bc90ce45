"""The wave gate's wait: when a spoke counts as healthy (every Deployment rolled out and
Available), polling until healthy, giving up at the timeout, tolerating up to
maxFailures failing spokes (unreachable ones included), and what a failed wave tells
the user. Nothing sleeps for real here."""

from __future__ import annotations

import contextlib

import pytest

from lifecycle import wave_gate
from lifecycle.wave_gate import (
    deployment_problem,
    spoke_problems,
    wave_failed_message,
    wave_failures,
)
from tests.support.factories import deployment

NAME = "knative-serving/controller"
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


def test_rolled_out_and_available_is_healthy() -> None:
    assert deployment_problem(deployment(), NAME) is None


def test_each_unhealthy_state_says_why() -> None:
    assert deployment_problem(None, NAME) == f"Deployment {NAME} does not exist"
    assert "has not seen the latest change" in deployment_problem(
        deployment(generation=3, observed=2), NAME)
    assert "Available=False (MinimumReplicasAvailable" in deployment_problem(
        deployment(available_status="False"), NAME)
    # A rollout stuck behind a pod that cannot be scheduled: the old pod still serves.
    stuck = deployment_problem(deployment(progressing_reason="ReplicaSetUpdated"), NAME)
    assert stuck is not None and "rollout not complete" in stuck and "ReplicaSetUpdated" in stuck
    assert "1 updated and 1 available of 2 replicas" in deployment_problem(
        deployment(replicas=2), NAME)


def test_spoke_problems_cover_every_expected_deployment() -> None:
    live = {NAME: deployment(), "knative-serving/webhook": None}
    assert spoke_problems(live, [NAME, "knative-serving/webhook"]) == [
        "Deployment knative-serving/webhook does not exist"]


def test_failures_and_the_message_name_wave_spokes_and_later_waves() -> None:
    failures = wave_failures({"s1": ["Deployment x: bad"], "s2": []}, {"s3": "no route"})
    assert failures == {"s1": "Deployment x: bad", "s3": "unreachable: no route"}
    text = wave_failed_message("canary", failures, 60, 1, ["main", "edge"])
    assert text.startswith("wave 'canary' is not healthy: 2 spoke(s) failed within 60s, "
                           "more than its maxFailures (1):")
    assert "  spoke 's1': Deployment x: bad" in text
    assert "Later waves were not started (main, edge)" in text
    assert "It was the last wave." in wave_failed_message("main", failures, 60, 0, [])


def test_waits_until_every_spoke_is_healthy() -> None:
    clock = Clock()
    out = wave_gate.await_wave(props(["a", "b"]), reader({"a": 0, "b": 4}, clock),
                               clock, clock.sleep)
    assert out == {"healthy": {"a": True, "b": True}, "failures": {}}
    assert 4 <= clock.now < 10


def test_a_spoke_still_unhealthy_at_the_timeout_fails_the_wave() -> None:
    clock = Clock()
    with pytest.raises(RuntimeError) as err:
        wave_gate.await_wave(props(["a", "b"]), reader({"a": 0, "b": 99}, clock),
                             clock, clock.sleep)
    assert clock.now >= 10
    assert "wave 'canary' is not healthy: 1 spoke(s) failed within 10s" in str(err.value)
    assert "spoke 'b': Deployment knative-serving/controller: Available=False" in str(err.value)


def test_max_failures_tolerates_unhealthy_and_unreachable_spokes() -> None:
    clock = Clock()
    out = wave_gate.await_wave(props(["a", "b"], max_failures=2, unreachable={"c": "gone"}),
                               reader({"a": 0, "b": 99}, clock), clock, clock.sleep)
    assert out["healthy"] == {"a": True, "b": False}
    assert set(out["failures"]) == {"b", "c"}
    with pytest.raises(RuntimeError, match="2 spoke"):
        wave_gate.await_wave(props(["a", "b"], max_failures=1, unreachable={"c": "gone"}),
                             reader({"a": 0, "b": 99}, clock), clock, clock.sleep)


def test_a_read_error_is_that_spokes_failure() -> None:
    clock = Clock()

    def broken(spoke: str, _p: dict, _t: float) -> dict:
        raise ConnectionError("refused")

    with pytest.raises(RuntimeError, match="cannot read its Deployments: ConnectionError"):
        wave_gate.await_wave(props(["a"]), broken, clock, clock.sleep)


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

    monkeypatch.setattr(wave_gate, "spoke_client", fake_client)
    monkeypatch.setattr(wave_gate, "_read", fake_read)
    reader = wave_gate.DeploymentReader()
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
