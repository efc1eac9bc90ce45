"""Taking away namespaces and CRDs that a test or the lab made, and waiting until they are
gone, in the order that lets Kubernetes finish quickly on a busy machine.

Namespaces go first, while the CRDs stay as they are. Kubernetes' namespace controller
lists every namespaced kind in discovery before it lets a namespace go; a CRD deleted at
the same moment can fail that discovery, and the controller retries a failed namespace
with a backoff that grows to a minute a try. A namespace still there at the deadline is
reported with its status conditions, which say what the controller is waiting for."""

from __future__ import annotations

from collections.abc import Iterable

from kubernetes import client

from lab.idempotent import delete_if_present
from lab.wait import WaitTimeout, wait_for


def delete_namespaces(api: client.ApiClient, namespaces: Iterable[str],
                      timeout: float = 300) -> None:
    """Deletes the namespaces (those that exist) and waits until they are gone."""
    wanted = set(namespaces)
    core = client.CoreV1Api(api)
    for ns in sorted(wanted):
        delete_if_present(core.delete_namespace, ns)

    def remaining() -> list[client.V1Namespace]:
        return [n for n in core.list_namespace().items if n.metadata.name in wanted]

    try:
        wait_for(lambda: not remaining(), timeout,
                 what=f"namespaces {', '.join(sorted(wanted))} deleted")
    except WaitTimeout as exc:
        raise WaitTimeout(f"{exc}; still there: {_conditions(remaining())}") from None


def delete_crds(api: client.ApiClient, names: Iterable[str], timeout: float = 120) -> None:
    """Deletes the CRDs (those that exist) and waits until they are gone."""
    wanted = set(names)
    ext = client.ApiextensionsV1Api(api)
    for name in sorted(wanted):
        delete_if_present(ext.delete_custom_resource_definition, name)
    wait_for(lambda: not wanted & {c.metadata.name for c in
                                   ext.list_custom_resource_definition().items},
             timeout, what=f"CRDs {', '.join(sorted(wanted))} deleted")


def delete_namespaces_then_crds(api: client.ApiClient, namespaces: Iterable[str],
                                crds: Iterable[str]) -> None:
    """The namespaces, once they are gone the CRDs (module docstring: why this order)."""
    delete_namespaces(api, namespaces)
    delete_crds(api, crds)


def _conditions(namespaces: list[client.V1Namespace]) -> str:
    """Each namespace's phase and the conditions the namespace controller set on it."""
    parts = []
    for ns in namespaces:
        status = ns.status or client.V1NamespaceStatus()
        conds = "; ".join(f"{c.type}={c.status} {c.reason}: {c.message}"
                          for c in status.conditions or [])
        parts.append(f"{ns.metadata.name} ({status.phase}) {conds or 'no conditions'}")
    return " | ".join(parts)
