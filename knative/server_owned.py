"""Fields of the install's objects that the cluster fills in, so diffing them would show a
change on every preview and a drift check would report the cluster's own writes: an
aggregated ClusterRole's rules (the aggregation controller), the PingSource adapter's
replicas and controller-filled env values (the PingSource controller scales it from 0
when a PingSource exists; the operator keeps the live values on every reconcile), and
each webhook's `rules` and `clientConfig.caBundle` in Knative's webhook configurations
(Knative's webhook writes both when it starts and keeps them: its CA, and the rules of
the types it serves, one per group and version, where the release ships a single
bootstrap rule so that nothing is admitted unjudged before the webhook answers). The
release's values are applied when the object is created; after that the webhook's
stand, so a `pulumi up --refresh` does not take them back on every drift repair.

The certificates in the webhooks' Secrets need no entry: the release's Secrets carry no
`data`, so the fleet never applies, compares or owns it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Env vars of the PingSource adapter whose values Eventing's PingSource controller writes
# ("DO NOT MODIFY: The values below are being filled by the ping source controller" in
# the release): the operator's list (ReplicasEnvVarsTransform) and 1.21's
# K_OBSERVABILITY_CONFIG, which replaced K_METRICS_CONFIG and K_TRACING_CONFIG.
PINGSOURCE_ADAPTER = "pingsource-mt-adapter"
WEBHOOK_CONFIGURATIONS = frozenset({
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"})
CONTROLLER_FILLED_ENV = frozenset({
    "K_METRICS_CONFIG", "K_LOGGING_CONFIG", "K_LEADER_ELECTION_CONFIG", "K_NO_SHUTDOWN_AFTER",
    "K_SINK_TIMEOUT", "K_TRACING_CONFIG", "K_OBSERVABILITY_CONFIG"})


def server_owned_fields(obj: Mapping[str, Any]) -> list[str]:
    """The object's fields the cluster owns, as Pulumi `ignoreChanges` paths."""
    if obj["kind"] == "ClusterRole" and "aggregationRule" in obj:
        return ["rules"]
    if obj["kind"] in WEBHOOK_CONFIGURATIONS:
        return [path for i, webhook in enumerate(obj.get("webhooks") or [])
                if "service" in (webhook.get("clientConfig") or {})
                for path in (f"webhooks[{i}].rules", f"webhooks[{i}].clientConfig.caBundle")]
    if obj["kind"] == "Deployment" and obj["metadata"]["name"] == PINGSOURCE_ADAPTER:
        containers = obj["spec"]["template"]["spec"].get("containers") or []
        return ["spec.replicas", *(
            f"spec.template.spec.containers[{ci}].env[{ei}].value"
            for ci, c in enumerate(containers) for ei, e in enumerate(c.get("env") or [])
            if e.get("name") in CONTROLLER_FILLED_ENV)]
    return []
