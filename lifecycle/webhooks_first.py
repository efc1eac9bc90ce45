"""Knative's admission webhook configurations deleted from the spoke while their webhooks
still answer, before Pulumi deletes the Deployments and namespaced objects of the install
(the typed resources of the configurations then find them gone, which their delete takes
as done): the delete step of `components.webhooks_first`, per component, and of the owner
guard, for the whole install of a spoke whose state a release without that resource wrote
(its `pulumi destroy` does not run the program, so only the state's guard is there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from access.spoke_client import spoke_client
from core.errors import StepError

if TYPE_CHECKING:
    from fleet.plan import ComponentInstall

REQUEST_TIMEOUT_S = 15


def step_inputs(component: ComponentInstall, spoke: str, connection: Any,
                plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of the component's WebhookConfigurationsFirst, what
    `delete_configurations` reads: the one definition the registrar (components.spoke)
    and the offline review both use."""
    assert component.webhooks_first is not None
    return {"id": component.webhooks_first, "spoke": spoke,
            "configurations": sorted(component.webhook_configurations),
            "connection": connection, "pluginTimeoutSeconds": plugin_timeout_s}


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


MANAGED_BY = "app.kubernetes.io/managed-by=knative-fleet"


class WebhookConfigurationsLeft(StepError):
    """The install's webhook configurations could not be deleted first; its message says
    which spoke, that nothing was deleted after, and the way on."""


def delete_install_configurations(props: dict[str, Any]) -> list[str]:
    """Deletes every webhook configuration this product manages on the spoke whose
    webhooks are served in a namespace of the install (the namespaces of the owner guard's
    `anchors`); returns the "Kind/name" of those deleted."""
    namespaces = {str(a).split("/", 1)[0] for a in props.get("anchors") or []}
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    found: list[str] = []
    with spoke_client(props["connection"], timeout) as api:
        admission = client.AdmissionregistrationV1Api(api)
        for kind, listing in (
                ("ValidatingWebhookConfiguration",
                 admission.list_validating_webhook_configuration),
                ("MutatingWebhookConfiguration", admission.list_mutating_webhook_configuration)):
            for config in listing(label_selector=MANAGED_BY,
                                  _request_timeout=REQUEST_TIMEOUT_S).items:
                served = {(w.client_config.service.namespace
                           if w.client_config and w.client_config.service else None)
                          for w in config.webhooks or []}
                if served & namespaces:
                    found.append(f"{kind}/{config.metadata.name}")
    return delete_configurations({**props, "configurations": found})


def delete_install_configurations_or_refuse(props: dict[str, Any]) -> list[str]:
    """delete_install_configurations, its failure a WebhookConfigurationsLeft that names
    the spoke: the destroy stops there, with nothing of the install deleted."""
    try:
        return delete_install_configurations(props)
    except Exception as exc:  # noqa: BLE001 - fail closed: the install stays whole
        raise WebhookConfigurationsLeft(
            f"spoke {props.get('spoke')!r}: could not delete the install's webhook "
            f"configurations before their webhooks: {type(exc).__name__}: {exc}; nothing on "
            "the spoke was deleted. Fix: make sure the spoke and the hub are reachable (the "
            "access provider's plugin runs for this step), then run the command again") from exc
