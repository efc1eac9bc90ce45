"""A component's CRDs applied to the spoke in one step, before their typed resources
import them (fleet.crds_first says why): the create and update step of
`components.crds_first`.

Each CRD goes with server-side apply under the fleet's field manager, forced (the
`pulumi.com/patchFieldManager` and `pulumi.com/patchForce` annotations the typed
resources apply with, fleet.objects.APPLY_ANNOTATIONS), so the fields are owned as the
typed resource would own them, and a CRD an earlier destroy kept, or another fleet stack
applied, is adopted. Then the step waits until every CRD is `Established`: the objects
of its kinds come after it. It polls with one list of the CRDs their shared labels select
(a Knative release's all carry `knative.dev/crd-install=true` and its name), not a read
per CRD: the spoke answers one request per poll instead of one per CRD. Any failure is
raised: the step fails, and nothing that waits for it (the CRDs' typed resources, the
install after them) is registered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubernetes import client

from access.spoke_client import spoke_client
from core.errors import StepError
from fleet import crds_first
from fleet.objects import APPLY_ANNOTATIONS
from knative.aggregated_roles import selector_string

FIELD_MANAGER = APPLY_ANNOTATIONS["pulumi.com/patchFieldManager"]
FORCE = APPLY_ANNOTATIONS["pulumi.com/patchForce"] == "true"
REQUEST_TIMEOUT_S = 30
ESTABLISHED_TIMEOUT_S = 120.0
POLL_S = 0.2


class CrdsNotApplied(StepError):
    """The component's CRDs could not be applied or did not become Established; the
    message names the spoke, the CRDs and the way on."""


def established(crd: client.V1CustomResourceDefinition) -> bool:
    """Whether the CRD's `Established` condition is True."""
    conditions = (crd.status.conditions if crd.status else None) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


def shared_labels(bodies: Sequence[Mapping[str, Any]]) -> str:
    """The label selector every CRD in `bodies` matches (the labels they all carry, e.g.
    a Knative release's `knative.dev/crd-install=true,app.kubernetes.io/name=...`), or
    "" when they share none."""
    common: set[tuple[str, str]] | None = None
    for body in bodies:
        labels = set(((body.get("metadata") or {}).get("labels") or {}).items())
        common = labels if common is None else common & labels
    return selector_string({"matchLabels": dict(common or ())})


def still_pending(ext: Any, pending: Sequence[str], selector: str) -> list[str]:
    """Which of `pending` are not Established yet: one list of the CRDs the selector
    matches (the step's own, not all the spoke's), a read only for a name the list did not
    hold; with no selector, a read of each."""
    listed: dict[str, bool] = {}
    if selector:
        found = ext.list_custom_resource_definition(label_selector=selector,
                                                    _request_timeout=REQUEST_TIMEOUT_S)
        listed = {crd.metadata.name: established(crd) for crd in found.items or []}

    def pending_one(name: str) -> bool:
        if name in listed:
            return not listed[name]
        return not established(
            ext.read_custom_resource_definition(name, _request_timeout=REQUEST_TIMEOUT_S))

    return [n for n in pending if pending_one(n)]


def apply_all(ext: Any, bodies: Sequence[Mapping[str, Any]],
              timeout_s: float = ESTABLISHED_TIMEOUT_S,
              clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep) -> list[str]:
    """Applies each CRD with `ext` (an ApiextensionsV1Api), then waits until all are
    Established, one list of them per poll; returns their names. Raises CrdsNotApplied
    naming what is missing."""
    pending: list[str] = []
    names = []
    for body in bodies:
        name = body["metadata"]["name"]
        names.append(name)
        applied = ext.patch_custom_resource_definition(
            name, body, field_manager=FIELD_MANAGER, force=FORCE,
            _content_type="application/apply-patch+yaml",
            _request_timeout=REQUEST_TIMEOUT_S)
        if not established(applied):
            pending.append(name)
    selector = shared_labels(bodies)
    deadline = clock() + timeout_s
    while pending:
        if clock() >= deadline:
            raise CrdsNotApplied(
                f"not Established after {timeout_s:.0f} s: {', '.join(pending)}")
        sleep(POLL_S)
        pending = still_pending(ext, pending, selector)
    return names


def apply_crds(props: dict[str, Any]) -> list[str]:
    """The step: the CRDs of `props["manifest"]` applied to the spoke and Established.
    Its failure is a CrdsNotApplied that names the spoke and the way on."""
    names = props.get("crds") or []
    try:
        bodies = crds_first.decode(props["manifest"])
        timeout = float(props.get("pluginTimeoutSeconds") or 30)
        with spoke_client(props["connection"], timeout) as api:
            return apply_all(client.ApiextensionsV1Api(api), bodies)
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise CrdsNotApplied(
            f"spoke {props.get('spoke')!r}: could not apply the CustomResourceDefinitions "
            f"{', '.join(names)} before their resources: {type(exc).__name__}: {exc}. "
            "Nothing that needs them was registered. Fix: make sure the spoke and the hub "
            "are reachable (the access provider's plugin runs for this step) and that the "
            "spoke's credential may apply CustomResourceDefinitions, then run the command "
            "again.") from exc
