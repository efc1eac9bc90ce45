"""When a spoke counts as healthy (every Deployment rolled out and Available), and what
a failed wave tells the user."""

from __future__ import annotations

from rollout.health import (
    deployment_problem,
    spoke_problems,
    wave_failed_message,
    wave_failures,
)
from tests.support.factories import deployment

NAME = "knative-serving/controller"


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
