"""Fields the cluster writes are left out of diffs: aggregated rules, and the PingSource
adapter's replicas and controller-filled env values (the operator's
ReplicasEnvVarsTransform keeps them too)."""

from __future__ import annotations

from knative.server_owned import server_owned_fields
from tests.support.releases import eventing, find


def test_pingsource_adapter_replicas_and_filled_env_values() -> None:
    adapter = find(eventing(), "Deployment", "pingsource-mt-adapter")
    env = [e["name"] for e in adapter["spec"]["template"]["spec"]["containers"][0]["env"]]
    paths = server_owned_fields(adapter)
    assert paths[0] == "spec.replicas"
    named = {env[int(p.split("env[")[1].split("]")[0])] for p in paths[1:]}
    assert named == {"K_OBSERVABILITY_CONFIG", "K_LOGGING_CONFIG", "K_LEADER_ELECTION_CONFIG",
                     "K_NO_SHUTDOWN_AFTER", "K_SINK_TIMEOUT"} & set(env)
    assert "K_LOGGING_CONFIG" in named
    assert all(p.endswith("].value") for p in paths[1:])


def test_other_deployments_are_diffed_whole() -> None:
    controller = find(eventing(), "Deployment", "eventing-controller")
    assert server_owned_fields(controller) == []


def test_aggregated_cluster_role_rules() -> None:
    assert server_owned_fields({"kind": "ClusterRole", "metadata": {"name": "x"},
                          "aggregationRule": {}}) == ["rules"]
