"""Plain objects the unit tests share."""

from __future__ import annotations

from typing import Any

from access import SpokeConnection


def spoke_connection() -> SpokeConnection:
    """A connection to a local spoke through the `secretreader` plugin."""
    return SpokeConnection(
        server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
        tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
        args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})


def deployment(generation: int = 2, observed: int = 2, replicas: int = 1,
               updated: int = 1, available: int = 1, available_status: str = "True",
               progressing_reason: str = "NewReplicaSetAvailable") -> dict:
    return {
        "metadata": {"name": "controller", "generation": generation},
        "spec": {"replicas": replicas},
        "status": {"observedGeneration": observed, "updatedReplicas": updated,
                   "availableReplicas": available,
                   "conditions": [
                       {"type": "Available", "status": available_status,
                        "reason": "MinimumReplicasAvailable", "message": "ok"},
                       {"type": "Progressing", "status": "True",
                        "reason": progressing_reason, "message": "rs progressing"}]},
    }


def resolved_and_planned(cfg: Any, entries: list[Any], *_: object) -> list[Any]:
    """`components.fleet.resolve_fleet` without a hub: every entry reached at
    `spoke_connection()` on Kubernetes 1.36, and planned from the release files."""
    from components import fleet as fleet_mod
    from knative import plan as planning

    return [fleet_mod.SpokeResult(
        entry=e, connection=spoke_connection(), server_version="v1.36.3",
        plans=planning.plan_spoke(e.serving, e.eventing, cfg.release_base, {}))
        for e in entries]
