"""The delete steps of the aggregated-role guard and sweep (`components.aggregated_role_guard`
says why they exist): they read and delete ClusterRoles on the spoke, with a credential
the exec plugin issues at delete time, and outwait the aggregation controller, which
re-creates a deleted aggregated role from its cache (`knative.aggregated_roles`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from access.spoke_client import spoke_client
from knative.aggregated_roles import is_controller_recreation, selector_strings, settled

if TYPE_CHECKING:
    from fleet.plan import AggregatedRoleGuard, SpokeInstall

SETTLE_TIMEOUT_S = 120.0
GONE_TIMEOUT_S = 60.0
POLL_S = 0.5


def guard_inputs(guard: AggregatedRoleGuard, spoke: str, connection: Any,
                 plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of one aggregated role's guard, what its delete reads: the one
    definition the registrar (components.spoke) and the offline review both use."""
    role = guard.role.object_name
    return {"id": role, "role": role, "spoke": spoke, "connection": connection,
            "pluginTimeoutSeconds": plugin_timeout_s}


def sweep_inputs(install: SpokeInstall, spoke: str, connection: Any) -> dict[str, Any]:
    """The inputs of the spoke's aggregated-role sweep, what its delete reads (as
    `guard_inputs`, one definition for the registrar and the offline review)."""
    assert install.sweep_name is not None
    return {"id": install.sweep_name, "roles": sorted(install.sweep_roles), "spoke": spoke,
            "connection": connection, "pluginTimeoutSeconds": install.plugin_timeout_s}


@contextlib.contextmanager
def _rbac(props: dict[str, Any]) -> Iterator[Any]:
    """An RBAC client for the spoke, with a credential (token or client certificate)
    the exec plugin issues now, usable for the block."""
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    with spoke_client(props["connection"], timeout) as api:
        yield client.RbacAuthorizationV1Api(api)


def _read(rbac: Any, name: str) -> dict | None:
    try:
        return rbac.api_client.sanitize_for_serialization(
            rbac.read_cluster_role(name, _request_timeout=15))
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _delete(rbac: Any, obj: dict) -> None:
    uid = obj["metadata"]["uid"]
    try:
        rbac.delete_cluster_role(
            obj["metadata"]["name"], _request_timeout=15,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=uid)))
    except ApiException as exc:
        if exc.status not in (404, 409):  # gone, or already a different object
            raise


def _until(deadline: float, check: Callable[[], bool]) -> bool:
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def delete_recreations(rbac: Any, name: str, timeout: float = GONE_TIMEOUT_S) -> None:
    """Deletes `name` while it is a role only the aggregation controller wrote, until the
    name is free or held by an object someone else wrote (which is left alone)."""
    def free() -> bool:
        live = _read(rbac, name)
        if live is None or not is_controller_recreation(live):
            return True
        _delete(rbac, live)
        return False

    if not _until(time.monotonic() + timeout, free):
        raise RuntimeError(f"ClusterRole {name} is still re-created by the aggregation "
                           f"controller after {timeout:.0f}s")


def settle_and_delete(props: dict[str, Any]) -> None:
    """The guard's delete: wait for the controller to catch up, delete, free the name."""
    with _rbac(props) as rbac:
        _settle_and_delete(rbac, props["role"])


def _settle_and_delete(rbac: Any, name: str) -> None:
    live = _read(rbac, name)
    if live is None:
        delete_recreations(rbac, name)
        return

    def caught_up() -> bool:
        nonlocal live
        live = _read(rbac, name)
        if live is None:
            return True
        # Only the roles its selectors pick, as the controller's lister does.
        roles: dict[str, dict] = {}
        for selector in selector_strings(live):
            found = rbac.api_client.sanitize_for_serialization(rbac.list_cluster_role(
                label_selector=selector, _request_timeout=30)).get("items") or []
            roles.update({r["metadata"]["name"]: r for r in found})
        return settled(live, list(roles.values()))

    # A controller that never catches up (stopped, or the role's selectors match
    # nothing it can see) does not block the uninstall: the sweep checks again last.
    _until(time.monotonic() + SETTLE_TIMEOUT_S, caught_up)
    if live is not None:
        uid = live["metadata"]["uid"]
        _delete(rbac, live)
        _until(time.monotonic() + GONE_TIMEOUT_S,
               lambda: (cur := _read(rbac, name)) is None or cur["metadata"]["uid"] != uid)
    delete_recreations(rbac, name)


def sweep(props: dict[str, Any]) -> None:
    """The sweep's delete: no aggregated role of the install may exist again."""
    with _rbac(props) as rbac:
        for name in props["roles"]:
            delete_recreations(rbac, name)
