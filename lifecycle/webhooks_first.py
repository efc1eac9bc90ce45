"""The delete step of `components.webhooks_first`: a component's admission webhook
configurations deleted from the spoke while their webhooks still answer, before Pulumi
deletes the component's Deployments and namespaced objects (the typed resources of the
configurations then find them gone, which their delete takes as done)."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from access.spoke_client import spoke_client

REQUEST_TIMEOUT_S = 15


def delete_configurations(props: dict[str, Any]) -> list[str]:
    """Deletes each "Kind/name" of `props["configurations"]`; returns those deleted (an
    absent one is already done). Any other error is raised: the destroy stops there."""
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    deleted = []
    with spoke_client(props["connection"], timeout) as api:
        admission = client.AdmissionregistrationV1Api(api)
        delete = {"ValidatingWebhookConfiguration":
                  admission.delete_validating_webhook_configuration,
                  "MutatingWebhookConfiguration":
                  admission.delete_mutating_webhook_configuration}
        for entry in props.get("configurations") or []:
            kind, _, name = str(entry).partition("/")
            try:
                delete[kind](name, _request_timeout=REQUEST_TIMEOUT_S)
                deleted.append(entry)
            except ApiException as exc:
                if exc.status != 404:
                    raise
    return deleted
