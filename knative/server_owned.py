"""Fields of the install's objects that the cluster fills in, so diffing them would show a
change on every preview and a drift check would report the cluster's own writes: an
aggregated ClusterRole's rules (the aggregation controller), and the PingSource adapter's
replicas and controller-filled env values (the PingSource controller scales it from 0
when a PingSource exists; the operator keeps the live values on every reconcile)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Env vars of the PingSource adapter whose values Eventing's PingSource controller writes
# ("DO NOT MODIFY: The values below are being filled by the ping source controller" in
# the release): the operator's list (ReplicasEnvVarsTransform) and 1.21's
# K_OBSERVABILITY_CONFIG, which replaced K_METRICS_CONFIG and K_TRACING_CONFIG.
PINGSOURCE_ADAPTER = "pingsource-mt-adapter"
CONTROLLER_FILLED_ENV = frozenset({
    "K_METRICS_CONFIG", "K_LOGGING_CONFIG", "K_LEADER_ELECTION_CONFIG", "K_NO_SHUTDOWN_AFTER",
    "K_SINK_TIMEOUT", "K_TRACING_CONFIG", "K_OBSERVABILITY_CONFIG"})


def server_owned_fields(obj: Mapping[str, Any]) -> list[str]:
    """The object's fields the cluster owns, as Pulumi `ignoreChanges` paths."""
    if obj["kind"] == "ClusterRole" and "aggregationRule" in obj:
        return ["rules"]
    if obj["kind"] == "Deployment" and obj["metadata"]["name"] == PINGSOURCE_ADAPTER:
        containers = obj["spec"]["template"]["spec"].get("containers") or []
        return ["spec.replicas", *(
            f"spec.template.spec.containers[{ci}].env[{ei}].value"
            for ci, c in enumerate(containers) for ei, e in enumerate(c.get("env") or [])
            if e.get("name") in CONTROLLER_FILLED_ENV)]
    return []
