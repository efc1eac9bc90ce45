"""Uninstall that never leaves a webhook configuration without its webhook.

Knative's admission webhook configurations say `failurePolicy: Fail`: while one exists
and its webhook does not answer, the API server refuses everything it matches. Pulumi
deletes a component's Deployments (the webhook's among them) before the cluster-scoped
objects they were created after, so the configurations would outlive their webhooks,
and then the garbage collector's removal of a deleted object's `foregroundDeletion`
finalizer (an update Knative's config webhook judges, as Eventing's SinkBinding webhook
judges every Deployment update in the cluster) is refused and the delete never ends.
The creation order must stay the release's: a webhook fills in its configurations when
it starts, before it answers.

So each component with webhook configurations gets `WebhookConfigurationsFirst`, a
dynamic resource that depends on the configurations, the component's Deployments and its
namespaced objects; Pulumi deletes it before any of those, and its delete removes the
configurations from the spoke while their webhooks still answer. It holds how to reach
the spoke (no credential: the exec plugin runs at delete time), marked secret.

The delete step itself is in `lifecycle.webhooks_first`.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.dynamic_provider import GuardProvider
from core.resource_types import WEBHOOKS_FIRST


class _Provider(GuardProvider):
    kind = WEBHOOKS_FIRST

    def delete_step(self, props: dict[str, Any]) -> None:
        from lifecycle import webhooks_first

        webhooks_first.delete_configurations(props)

    def delete_failed(self, props: dict[str, Any], exc: Exception) -> str:
        return (f"spoke {props.get('spoke')!r}: could not delete the webhook configurations "
                f"{', '.join(props.get('configurations') or [])} before their webhooks: "
                f"{type(exc).__name__}: {exc}. Nothing of the component was deleted after "
                "it. Fix: make sure the spoke and the hub are reachable (the access "
                "provider's plugin runs for this step), then run the command again.")


class WebhookConfigurationsFirst(pulumi.dynamic.Resource, module="knative-fleet",
                                 name=WEBHOOKS_FIRST.name):
    """Deleted before the component's Deployments and namespaced objects (module docstring)."""

    def __init__(self, name: str, *, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: lifecycle.webhooks_first.step_inputs, its connection marked secret
        here."""
        super().__init__(
            _Provider(), name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
