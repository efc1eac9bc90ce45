"""The objects a holding step applies, reads and deletes in one step, a component's
ClusterRoles and ClusterRoleBindings (fleet.held_rbac says why), and its namespaced
ServiceAccounts, Roles, RoleBindings, Services, autoscalers and disruption budgets
(fleet.held_namespaced): the steps of
`components.held_rbac`. An object is named by its key, `Kind/name` or
`Kind/namespace/name`.

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


class ObjectsNotApplied(StepError):
    """The objects a step holds could not be applied, read or deleted; the message names
    the spoke, the objects and the way on."""


# kind -> (the client's method suffix, namespaced)
_METHODS = {
    "ClusterRole": ("cluster_role", False),
    "ClusterRoleBinding": ("cluster_role_binding", False),
    "Role": ("role", True),
    "RoleBinding": ("role_binding", True),
    "ServiceAccount": ("service_account", True),
    "Service": ("service", True),
    "HorizontalPodAutoscaler": ("horizontal_pod_autoscaler", True),
    "PodDisruptionBudget": ("pod_disruption_budget", True),
}


class Apis:
    """The API clients a step's kinds need (RbacAuthorizationV1Api, CoreV1Api, ...), as
    one: a method is looked up on each in turn."""

    def __init__(self, *apis: Any) -> None:
        self.apis = apis

    def __getattr__(self, name: str) -> Any:
        for api in self.apis:
            if hasattr(api, name):
                return getattr(api, name)
        raise AttributeError(name)


def split_key(key: str) -> tuple[str, str, str]:
    """(kind, namespace, name) of a `Kind/name` or `Kind/namespace/name` key
    (core.crd_manifest.held_key); the namespace is "" for a cluster-scoped object."""
    parts = key.split("/", 2)
    return (parts[0], "", parts[1]) if len(parts) == 2 else (parts[0], parts[1], parts[2])


def _call(api: Any, verb: str, key: str, *args: Any, **kwargs: Any) -> Any:
    """`verb` (patch, read, delete, list) on the object of `key` (on its kind in its
    namespace, for list), with the positional arguments after its name and namespace."""
    kind, namespace, name = split_key(key)
    try:
        suffix, namespaced = _METHODS[kind]
    except KeyError:
        raise ObjectsNotApplied(f"the step holds no objects of kind {kind}") from None
    method = getattr(api, f"{verb}_{'namespaced_' if namespaced else ''}{suffix}")
    where = ((namespace,) if namespaced else ())
    named = () if verb == "list" else (name,)
    return method(*named, *where, *args, _request_timeout=REQUEST_TIMEOUT_S, **kwargs)


def _apply(api: Any, key: str, body: Mapping[str, Any]) -> Any:
    return _call(api, "patch", key, body, field_manager=FIELD_MANAGER, force=FORCE,
                 _content_type="application/apply-patch+yaml", _preload_content=False)


def immutable(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of `body` Kubernetes refuses to change in place: a binding's `roleRef`,
    a Service's `spec.clusterIP` when the body sets it (a headless Service)."""
    if "roleRef" in body:
        return {"roleRef": body["roleRef"]}
    if body.get("kind") == "Service" and "clusterIP" in (body.get("spec") or {}):
        return {"clusterIP": body["spec"]["clusterIP"]}
    return {}


def _immutable_changed(api: Any, key: str, body: Mapping[str, Any]) -> bool:
    """Whether the live object holds another value of a field that cannot change than
    `body` (what a 422 on it means when the apply is refused for that; a refusal for any
    other reason is raised)."""
    wanted = immutable(body)
    if not wanted:
        return False
    live = json.loads(_call(api, "read", key, _preload_content=False).data)
    return immutable({**live, "kind": body.get("kind")}) != wanted


def apply_all(api: Any, bodies: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Applies each object with `api` (Apis, or one client with every method the kinds
    need); returns {key: digest of the fields the fleet applied, as the answer holds
    them}. An object whose field that cannot change did (`immutable`), which the API
    server refuses (422), is deleted and made again, as the provider replaces a typed
    one."""
    recorded: dict[str, str] = {}
    for body in bodies:
        key = crd_manifest.held_key(body)
        try:
            answer = _apply(api, key, body)
        except ApiException as exc:
            if exc.status != 422 or not _immutable_changed(api, key, body):
                raise
            delete_all(api, [key])
            answer = _apply(api, key, body)
        recorded[key] = applied_digest(json.loads(answer.data), FIELD_MANAGER)
    return recorded


def live_objects(api: Any, keys: Sequence[str], selector: str) -> dict[str, dict[str, Any]]:
    """The live objects of `keys` as the API server sends them: one list per kind (and
    namespace) of those the selector matches, a read for any other; one that is gone is
    left out."""
    found: dict[str, dict[str, Any]] = {}
    if selector:
        for kind, namespace in sorted({split_key(k)[:2] for k in keys}):
            probe = f"{kind}/{namespace}/-" if namespace else f"{kind}/-"
            answer = _call(api, "list", probe, label_selector=selector,
                           _preload_content=False)
            for item in json.loads(answer.data).get("items") or []:
                found[crd_manifest.held_key({**item, "kind": kind})] = item
    for key in keys:
        if key in found:
            continue
        try:
            answer = _call(api, "read", key, _preload_content=False)
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        found[key] = json.loads(answer.data)
    return {key: found[key] for key in keys if key in found}


def delete_all(api: Any, keys: Sequence[str], timeout_s: float = DELETED_TIMEOUT_S,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> None:
    """Deletes each object (one that is gone already is fine), then waits until none is
    left; one still there at the deadline is named with its finalizers."""
    for key in keys:
        try:
            _call(api, "delete", key)
        except ApiException as exc:
            if exc.status != 404:
                raise
    deadline = clock() + timeout_s
    left = list(keys)
    while True:
        live = live_objects(api, left, "")
        left = list(live)
        if not left:
            return
        if clock() >= deadline:
            raise ObjectsNotApplied(f"not deleted after {timeout_s:.0f} s: " + "; ".join(
                f"{key} (finalizers: "
                f"{', '.join((live[key].get('metadata') or {}).get('finalizers') or []) or 'none'})"
                for key in left))
        sleep(POLL_S)


def clients(api: Any) -> Apis:
    """The clients of every kind a step may hold, on one API client."""
    return Apis(client.RbacAuthorizationV1Api(api), client.CoreV1Api(api),
                client.AutoscalingV2Api(api), client.PolicyV1Api(api))


def _failed(props: Mapping[str, Any], doing: str, exc: Exception, after: str) -> ObjectsNotApplied:
    keys = props.get("objects") or []
    return ObjectsNotApplied(
        f"spoke {props.get('spoke')!r}: could not {doing} the objects "
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
            apis = clients(api)
            recorded = apply_all(apis, bodies)
            if gone:
                delete_all(apis, list(gone))
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
            clients(api), sorted(recorded),
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
            delete_all(clients(api), keys)
    except Exception as exc:  # noqa: BLE001 - fail closed, naming the spoke
        raise _failed(props, "delete", exc,
                      "What was not deleted is still in the state.") from exc
