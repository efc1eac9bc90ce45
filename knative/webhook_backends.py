"""The Deployments that answer an install's admission webhooks: each webhook
configuration names a Service, whose selector picks the Deployment's pods. Whatever the
install creates after them goes through those webhooks, so they must answer first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from knative.server_owned import WEBHOOK_CONFIGURATIONS


def webhook_deployments(objects: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, str]]:
    """(namespace, name) of every Deployment whose pods the Service of one of the objects'
    webhook configurations selects."""
    objs = list(objects)
    services = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs
                if o.get("kind") == "Service" and o.get("apiVersion") == "v1"}
    selectors: list[tuple[str, Mapping[str, str]]] = []
    for config in objs:
        if config.get("kind") not in WEBHOOK_CONFIGURATIONS:
            continue
        for webhook in config.get("webhooks") or []:
            ref = (webhook.get("clientConfig") or {}).get("service") or {}
            service = services.get((ref.get("namespace", ""), ref.get("name", "")))
            selector = ((service or {}).get("spec") or {}).get("selector")
            if selector:
                selectors.append((ref.get("namespace", ""), selector))
    return frozenset(
        (namespace, o["metadata"]["name"]) for o in objs if o.get("kind") == "Deployment"
        for namespace, selector in selectors
        if o["metadata"].get("namespace") == namespace and _selects(
            selector, ((o.get("spec") or {}).get("template") or {}).get("metadata") or {}))


def _selects(selector: Mapping[str, str], pod_metadata: Mapping[str, Any]) -> bool:
    labels = pod_metadata.get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())
