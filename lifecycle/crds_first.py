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
raised: the step fails, and nothing that waits for it (the install after it) is
registered.

Once they are Established it records, per CRD, a digest of the fields the fleet applied
as the live CRD holds them (lifecycle.applied_fields): a refresh reads the CRDs again and
names those whose digest changed, or that are gone (`drifted`), and the next `up` applies
them again. Its delete, when the entry says `deleteCrdsOnDestroy: true`, deletes the CRDs
and waits until they are gone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from access.spoke_client import spoke_client
from core import crd_manifest
from core.errors import StepError
from fleet.objects import APPLY_ANNOTATIONS, CRD_NUDGE_ANNOTATION
from knative.aggregated_roles import selector_string
from lifecycle.applied_fields import applied_digest

FIELD_MANAGER = APPLY_ANNOTATIONS["pulumi.com/patchFieldManager"]
FORCE = APPLY_ANNOTATIONS["pulumi.com/patchForce"] == "true"
REQUEST_TIMEOUT_S = 30
ESTABLISHED_TIMEOUT_S = 120.0
DELETED_TIMEOUT_S = 600.0
POLL_S = 0.2
NUDGE_EVERY_S = 30.0  # a CRD its finalizer dropped again is nudged again, this often at most
DELETED = "deleted"
CHANGED = "changed"


class CrdsNotApplied(StepError):
    """The component's CRDs could not be applied, did not become Established, or (with
    `deleteOnDestroy`) were not deleted; the message names the spoke, the CRDs and the
    way on."""


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


def live_crds(ext: Any, names: Sequence[str], selector: str) -> dict[str, dict[str, Any]]:
    """The live CRDs of `names` as the API server sends them (plain JSON): one list of
    those the selector matches, a read for any other; a CRD that is gone is left out."""
    found: dict[str, dict[str, Any]] = {}
    if selector:
        answer = ext.list_custom_resource_definition(
            label_selector=selector, _preload_content=False,
            _request_timeout=REQUEST_TIMEOUT_S)
        for item in json.loads(answer.data).get("items") or []:
            found[item["metadata"]["name"]] = item
    for name in names:
        if name in found:
            continue
        try:
            answer = ext.read_custom_resource_definition(
                name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        found[name] = json.loads(answer.data)
    return {name: found[name] for name in names if name in found}


def applied_digests(ext: Any, names: Sequence[str], selector: str) -> dict[str, str]:
    """{name: digest of the fields the fleet applied} of the live CRDs."""
    return {name: applied_digest(body, FIELD_MANAGER)
            for name, body in live_crds(ext, names, selector).items()}


def drifted(recorded: Mapping[str, str], live: Mapping[str, str]) -> list[dict[str, str]]:
    """The CRDs whose fleet-applied fields are not as recorded: gone, or changed."""
    return [{"name": name, "change": DELETED if name not in live else CHANGED}
            for name in sorted(recorded) if live.get(name) != recorded[name]]


def _failed(props: Mapping[str, Any], doing: str, exc: Exception, after: str) -> CrdsNotApplied:
    names = props.get("crds") or []
    return CrdsNotApplied(
        f"spoke {props.get('spoke')!r}: could not {doing} the CustomResourceDefinitions "
        f"{', '.join(names)}: {type(exc).__name__}: {exc}. {after} Fix: make sure the "
        "spoke and the hub are reachable (the access provider's plugin runs for this "
        "step) and that the spoke's credential may do so, then run the command again.")


def apply_crds(props: dict[str, Any]) -> dict[str, Any]:
    """The step: the CRDs of `props["manifest"]` applied to the spoke and Established;
    returns what the state records of them (`applied`: each one's digest, `selector`).
    Its failure is a CrdsNotApplied that names the spoke and the way on."""
    try:
        bodies = crd_manifest.decode(props["manifest"])
        timeout = float(props.get("pluginTimeoutSeconds") or 30)
        with spoke_client(props["connection"], timeout) as api:
            ext = client.ApiextensionsV1Api(api)
            names = apply_all(ext, bodies)
            selector = shared_labels(bodies)
            return {"applied": applied_digests(ext, names, selector), "selector": selector}
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise _failed(props, "apply", exc, "Nothing that needs them was registered.") from exc


def read_drift(props: dict[str, Any]) -> list[dict[str, str]]:
    """A refresh's read: the recorded CRDs whose fleet-applied fields changed or that are
    gone (none known for a state that records no digests)."""
    recorded = props.get("applied")
    if not isinstance(recorded, dict) or not recorded:
        return []
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    with spoke_client(props["connection"], timeout) as api:
        live = applied_digests(client.ApiextensionsV1Api(api), sorted(recorded),
                               str(props.get("selector") or ""))
    return drifted(recorded, live)


NUDGE = CRD_NUDGE_ANNOTATION  # the admission policy admits it on a CRD being deleted


def stuck(crd: Mapping[str, Any]) -> bool:
    """Whether the API server's CRD finalizer failed once and stopped looking at the CRD
    (`InstanceDeletionFailed`; docs/performance.md, "A destroy that waits five minutes
    on a CRD"): any change makes it look again."""
    return any(c.get("type") == "Terminating" and c.get("reason") == "InstanceDeletionFailed"
               for c in (crd.get("status") or {}).get("conditions") or [])


def holding(crd: Mapping[str, Any]) -> str:
    """What keeps a CRD that is being deleted: its finalizers (the API server's own,
    customresourcecleanup.apiextensions.k8s.io, removes itself once no custom resource of
    the kind is left; any other belongs to whoever added it) and the finalizer's last
    word (the Terminating condition)."""
    finalizers = ", ".join((crd.get("metadata") or {}).get("finalizers") or []) or "none"
    said = [f"{c.get('reason')}: {c.get('message')}"
            for c in (crd.get("status") or {}).get("conditions") or []
            if c.get("type") == "Terminating"]
    return f"finalizers: {finalizers}; Terminating: {said[0] if said else 'not yet'}"


def delete_all(ext: Any, names: Sequence[str], timeout_s: float = DELETED_TIMEOUT_S,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> None:
    """Deletes each CRD (one that is gone already is fine), then waits until none is
    left: the API server deletes a CRD after every custom resource of its kind. A CRD
    whose finalizer gave up is nudged (an annotation), as docs/troubleshooting.md tells a
    user to, again while it stays so. One still there at the deadline is named with what
    holds it."""
    for name in names:
        try:
            ext.delete_custom_resource_definition(name, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as exc:
            if exc.status != 404:
                raise
    deadline = clock() + timeout_s
    left = list(names)
    nudged: dict[str, float] = {}
    while True:
        live = live_crds(ext, left, "")
        left = list(live)
        if not left:
            return
        for name in left:
            if stuck(live[name]) and clock() - nudged.get(name, -NUDGE_EVERY_S) >= NUDGE_EVERY_S:
                nudged[name] = clock()
                try:  # a help only: a nudge the spoke refuses leaves the wait as it was
                    ext.patch_custom_resource_definition(
                        name, {"metadata": {"annotations": {NUDGE: str(int(time.time()))}}},
                        _request_timeout=REQUEST_TIMEOUT_S)
                except ApiException:
                    pass
        if clock() >= deadline:
            raise CrdsNotApplied(f"not deleted after {timeout_s:.0f} s: " + "; ".join(
                f"{name} ({holding(live[name])})" for name in left))
        sleep(POLL_S)


def delete_crds(props: dict[str, Any], names: Sequence[str] | None = None) -> None:
    """The step's delete with `deleteOnDestroy`: its CRDs (or `names`) deleted and gone."""
    names = list(props.get("crds") or []) if names is None else list(names)
    if not names:
        return
    try:
        timeout = float(props.get("pluginTimeoutSeconds") or 30)
        with spoke_client(props["connection"], timeout) as api:
            delete_all(client.ApiextensionsV1Api(api), names)
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise _failed(props, "delete", exc,
                      "What was not deleted is still in the state.") from exc
