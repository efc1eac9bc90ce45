"""Taking away namespaces and CRDs that a test or the lab made, and waiting until they are
gone, in the order that lets Kubernetes finish quickly on a busy machine.

Namespaces go first, while the CRDs stay as they are. Kubernetes' namespace controller
lists every namespaced kind in discovery before it lets a namespace go; a CRD deleted at
the same moment can fail that discovery, and the controller retries a failed namespace
with a backoff that grows to a minute a try. A namespace still there at the deadline is
reported with its status conditions, which say what the controller is waiting for.

A CRD deleted seconds after it was created can sit Terminating for five minutes: the API
server's CRD finalizer (apiextensions-apiserver v0.36.3, `crd_finalizer.go`) fails to list
the instances while the new CRD's watch cache is "(re)initializing", records
`InstanceDeletionFailed`, and its retry, reading its own stale cache, hits a conflict and
drops the CRD; its update handler ignores changes to the Terminating condition, so only
the informer's five-minute resync picks the CRD up again. Any other change to the CRD
queues it at once, so a CRD found in that state gets an annotation (every 5 s at most
while it stays so)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from kubernetes import client

from lab.idempotent import delete_if_present, if_present
from lab.wait import WaitTimeout, wait_for

NUDGE = "knative-fleet.dev/finalizer-nudge"


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
    """Deletes the CRDs (those that exist) and waits until they are gone, nudging any the
    API server's finalizer dropped (module docstring)."""
    wanted = set(names)
    ext = client.ApiextensionsV1Api(api)
    for name in sorted(wanted):
        delete_if_present(ext.delete_custom_resource_definition, name)

    nudged: dict[str, float] = {}
    seen: dict[str, list] = {"left": []}

    def gone() -> bool:
        left = [c for c in ext.list_custom_resource_definition().items
                if c.metadata.name in wanted]
        seen["left"] = left
        for crd in left:
            name = crd.metadata.name
            if dropped_by_finalizer(crd) and time.monotonic() - nudged.get(name, -1e9) >= 5:
                nudged[name] = time.monotonic()
                if_present(ext.patch_custom_resource_definition, name,
                           {"metadata": {"annotations": {NUDGE: str(time.time())}}})
        return not left

    try:
        wait_for(gone, timeout, interval=1, what=f"CRDs {', '.join(sorted(wanted))} deleted")
    except WaitTimeout as exc:
        raise WaitTimeout(f"{exc}; still there: {_holding(seen['left'])}") from None


def dropped_by_finalizer(crd: client.V1CustomResourceDefinition) -> bool:
    """Terminating, and the finalizer's last word on it is InstanceDeletionFailed."""
    if crd.metadata.deletion_timestamp is None:
        return False
    conds = (crd.status.conditions if crd.status else None) or []
    return any(c.type == "Terminating" and c.reason == "InstanceDeletionFailed"
               for c in conds)


def delete_namespaces_then_crds(api: client.ApiClient, namespaces: Iterable[str],
                                crds: Iterable[str]) -> None:
    """The namespaces, once they are gone the CRDs (module docstring: why this order)."""
    delete_namespaces(api, namespaces)
    delete_crds(api, crds)


def _holding(crds: list[client.V1CustomResourceDefinition]) -> str:
    """Each CRD's finalizers and its Terminating condition: what keeps it."""
    parts = []
    for crd in crds:
        conds = (crd.status.conditions if crd.status else None) or []
        said = "; ".join(f"{c.reason}: {c.message}" for c in conds if c.type == "Terminating")
        parts.append(f"{crd.metadata.name} (finalizers: "
                     f"{', '.join(crd.metadata.finalizers or []) or 'none'}; "
                     f"Terminating: {said or 'not yet'})")
    return " | ".join(parts)


def _conditions(namespaces: list[client.V1Namespace]) -> str:
    """Each namespace's phase and the conditions the namespace controller set on it."""
    parts = []
    for ns in namespaces:
        status = ns.status or client.V1NamespaceStatus()
        conds = "; ".join(f"{c.type}={c.status} {c.reason}: {c.message}"
                          for c in status.conditions or [])
        parts.append(f"{ns.metadata.name} ({status.phase}) {conds or 'no conditions'}")
    return " | ".join(parts)
