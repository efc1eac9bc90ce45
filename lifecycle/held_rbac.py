"""A component's ClusterRoles and ClusterRoleBindings applied, read and deleted in one
step (fleet.held_rbac says why): the steps of `components.held_rbac`.

Each object goes with server-side apply under the fleet's field manager, forced (the
annotations the typed resources apply with, fleet.objects.APPLY_ANNOTATIONS), so its
fields are owned as a typed resource owns them, and one an earlier release's typed
resource applied is the same object, under the same manager, unchanged. The answer of
each apply is the live object: the step records a digest of the fields the fleet applied
to it (lifecycle.applied_fields), and a refresh reads them again (one list per kind of
those the shared labels select) and names those whose digest changed, or that are gone
(`drifted`); the next `up` applies them again. Its delete deletes each and waits until it
is gone. Any failure is raised: the step fails, naming the spoke and the objects, and
nothing that waits for it is registered (or, on delete, deleted).
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
from lifecycle.applied_fields import applied_digest
from lifecycle.crds_first import FIELD_MANAGER, FORCE, drifted, shared_labels

REQUEST_TIMEOUT_S = 30
DELETED_TIMEOUT_S = 120.0
POLL_S = 0.2


class RbacNotApplied(StepError):
    """The component's ClusterRoles and ClusterRoleBindings could not be applied, read or
    deleted; the message names the spoke, the objects and the way on."""


# kind -> the RbacAuthorizationV1Api methods' suffix
_METHODS = {"ClusterRole": "cluster_role", "ClusterRoleBinding": "cluster_role_binding"}


def _call(rbac: Any, verb: str, kind: str, *args: Any, **kwargs: Any) -> Any:
    try:
        suffix = _METHODS[kind]
    except KeyError:
        raise RbacNotApplied(f"the step holds no objects of kind {kind}") from None
    return getattr(rbac, f"{verb}_{suffix}")(*args, _request_timeout=REQUEST_TIMEOUT_S,
                                             **kwargs)


def split_key(key: str) -> tuple[str, str]:
    """(kind, name) of a `Kind/name` key (fleet.held_rbac.object_key)."""
    kind, _, name = key.partition("/")
    return kind, name


def _apply(rbac: Any, kind: str, name: str, body: Mapping[str, Any]) -> Any:
    return _call(rbac, "patch", kind, name, body, field_manager=FIELD_MANAGER, force=FORCE,
                 _content_type="application/apply-patch+yaml", _preload_content=False)


def _role_ref_changed(rbac: Any, kind: str, name: str, body: Mapping[str, Any]) -> bool:
    """Whether the live binding names another role than `body` (what a 422 on it means
    when the apply is refused for that; a refusal for any other reason is raised)."""
    if "roleRef" not in body:
        return False
    live = json.loads(_call(rbac, "read", kind, name, _preload_content=False).data)
    return live.get("roleRef") != body["roleRef"]


def apply_all(rbac: Any, bodies: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Applies each object with `rbac` (an RbacAuthorizationV1Api); returns {key: digest
    of the fields the fleet applied, as the answer holds them}. A binding whose `roleRef`
    changed, which the API server refuses to change (422), is deleted and made again, as
    the provider replaces a typed one."""
    recorded: dict[str, str] = {}
    for body in bodies:
        kind, name = body["kind"], body["metadata"]["name"]
        try:
            answer = _apply(rbac, kind, name, body)
        except ApiException as exc:
            if exc.status != 422 or not _role_ref_changed(rbac, kind, name, body):
                raise
            delete_all(rbac, [f"{kind}/{name}"])
            answer = _apply(rbac, kind, name, body)
        recorded[f"{kind}/{name}"] = applied_digest(json.loads(answer.data), FIELD_MANAGER)
    return recorded


def live_objects(rbac: Any, keys: Sequence[str], selector: str) -> dict[str, dict[str, Any]]:
    """The live objects of `keys` as the API server sends them: one list per kind of
    those the selector matches, a read for any other; one that is gone is left out."""
    found: dict[str, dict[str, Any]] = {}
    kinds = sorted({split_key(k)[0] for k in keys})
    if selector:
        for kind in kinds:
            answer = _call(rbac, "list", kind, label_selector=selector,
                           _preload_content=False)
            for item in json.loads(answer.data).get("items") or []:
                found[f"{kind}/{item['metadata']['name']}"] = item
    for key in keys:
        if key in found:
            continue
        kind, name = split_key(key)
        try:
            answer = _call(rbac, "read", kind, name, _preload_content=False)
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        found[key] = json.loads(answer.data)
    return {key: found[key] for key in keys if key in found}


def delete_all(rbac: Any, keys: Sequence[str], timeout_s: float = DELETED_TIMEOUT_S,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> None:
    """Deletes each object (one that is gone already is fine), then waits until none is
    left; one still there at the deadline is named with its finalizers."""
    for key in keys:
        kind, name = split_key(key)
        try:
            _call(rbac, "delete", kind, name)
        except ApiException as exc:
            if exc.status != 404:
                raise
    deadline = clock() + timeout_s
    left = list(keys)
    while True:
        live = live_objects(rbac, left, "")
        left = list(live)
        if not left:
            return
        if clock() >= deadline:
            raise RbacNotApplied(f"not deleted after {timeout_s:.0f} s: " + "; ".join(
                f"{key} (finalizers: "
                f"{', '.join((live[key].get('metadata') or {}).get('finalizers') or []) or 'none'})"
                for key in left))
        sleep(POLL_S)


def _failed(props: Mapping[str, Any], doing: str, exc: Exception, after: str) -> RbacNotApplied:
    keys = props.get("objects") or []
    return RbacNotApplied(
        f"spoke {props.get('spoke')!r}: could not {doing} the cluster RBAC objects "
        f"{', '.join(keys)}: {type(exc).__name__}: {exc}. {after} Fix: make sure the "
        "spoke and the hub are reachable (the access provider's plugin runs for this "
        "step) and that the spoke's credential may do so, then run the command again.")


def apply_objects(props: dict[str, Any], gone: Sequence[str] = ()) -> dict[str, Any]:
    """The step's create and update: the objects of `props["manifest"]` applied to the
    spoke, then those of `gone` (held before, no longer) deleted; returns what the state
    records of them (`applied`: each one's digest, `selector`)."""
    try:
        bodies = crd_manifest.decode(props["manifest"])
        timeout = float(props.get("pluginTimeoutSeconds") or 30)
        with spoke_client(props["connection"], timeout) as api:
            rbac = client.RbacAuthorizationV1Api(api)
            recorded = apply_all(rbac, bodies)
            if gone:
                delete_all(rbac, list(gone))
            return {"applied": recorded, "selector": shared_labels(bodies)}
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise _failed(props, "apply", exc, "Nothing that needs them was registered.") from exc


def read_drift(props: dict[str, Any]) -> list[dict[str, str]]:
    """A refresh's read: the recorded objects whose fleet-applied fields changed or that
    are gone."""
    recorded = props.get("applied")
    if not isinstance(recorded, dict) or not recorded:
        return []
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    with spoke_client(props["connection"], timeout) as api:
        live = {key: applied_digest(body, FIELD_MANAGER) for key, body in live_objects(
            client.RbacAuthorizationV1Api(api), sorted(recorded),
            str(props.get("selector") or "")).items()}
    return drifted(recorded, live)


def delete_objects(props: dict[str, Any]) -> None:
    """The step's delete: every object it holds deleted and gone."""
    keys = list(props.get("objects") or [])
    if not keys:
        return
    try:
        timeout = float(props.get("pluginTimeoutSeconds") or 30)
        with spoke_client(props["connection"], timeout) as api:
            delete_all(client.RbacAuthorizationV1Api(api), keys)
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise _failed(props, "delete", exc,
                      "What was not deleted is still in the state.") from exc
