"""Uninstall of aggregated ClusterRoles that leaves nothing behind and never hangs.

The race (see `knative.aggregated_roles`): the aggregation controller recomputes an
aggregated role whenever a ClusterRole changes and applies the result from its cache;
an apply that lands after the role's delete creates the role anew. Dependency order
alone cannot close that window while the controller's cache lags, and a Pulumi
resource hook would run only with `pulumi destroy --run-program`. So each spoke gets
two small dynamic resources whose delete step runs on every plain `pulumi destroy`
and on every `pulumi up` that removes a spoke or a component:

- `AggregatedRoleGuard`, one per aggregated role, sits between the role and its
  feeders (the feeders depend on the guard, the guard on the role), so Pulumi
  deletes the feeders first. Its delete waits until the live role holds exactly the
  rules the controller computes from the remaining roles: then the controller has
  seen every feeder delete and a late recompute from its cache writes nothing. Only
  then does it delete the role (uid precondition), and deletes again whatever the
  controller re-created until the name is free.
- `AggregatedRoleSweep`, one per spoke, is a dependency of every root object of the
  spoke, so its delete runs last: any aggregated role of the install that exists
  again and was written only by the controller is deleted, so destroy does not end
  while one is there.

The role itself is registered with `retain_on_delete`: the guard is what deletes it,
and Pulumi's delete only drops it from the state. A delete by the provider would issue
its own DELETE and then wait until the name is free, and a stale controller can write
the role again between the guard's end and that wait, which then lasts the provider's
whole 10-minute timeout (pulumi-kubernetes honours `pulumi.com/skipAwait` on delete
only for a few legacy kinds, not for ClusterRoles). Both resources hold how to reach
the spoke (no credential: the exec plugin runs at delete time, as the Kubernetes
provider runs it) and are marked secret like the provider's kubeconfig.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import pulumi
from kubernetes import client
from kubernetes.client.rest import ApiException
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

from components.spoke_access import spoke_client
from knative.aggregated_roles import is_controller_recreation, selector_strings, settled

SETTLE_TIMEOUT_S = 120.0
GONE_TIMEOUT_S = 60.0
POLL_S = 0.5


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


class _Provider(ResourceProvider):
    """Create and update record the inputs; only delete talks to the spoke."""

    def __init__(self, on_delete: Callable[[dict[str, Any]], None]) -> None:
        self.on_delete = on_delete

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=str(props["id"]), outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        keys = ("id", "spoke", "role", "roles", "connection", "pluginTimeoutSeconds")
        changed = [k for k in keys if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=news)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        try:
            self.on_delete(props)
        except Exception as exc:  # noqa: BLE001 - reported with the spoke and the way on
            what = props.get("role") or "the aggregated ClusterRoles"
            raise RuntimeError(
                f"spoke {props.get('spoke')!r}: could not remove {what} safely: "
                f"{type(exc).__name__}: {exc}. Fix: make sure the spoke and the hub are "
                "reachable (the access provider's plugin runs for this step), then run "
                "the command again; nothing was deleted that the run did not report.") from exc


class AggregatedRoleGuard(pulumi.dynamic.Resource, module="knative-fleet",
                          name="AggregatedRoleGuard"):
    """Deleted after the role's feeders and before the role (see the module docstring)."""

    def __init__(self, name: str, *, spoke: str, role: str, connection: dict[str, Any],
                 plugin_timeout_s: float, opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            _Provider(settle_and_delete), name,
            {"id": role, "role": role, "spoke": spoke,
             "connection": pulumi.Output.secret(connection),
             "pluginTimeoutSeconds": plugin_timeout_s},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))


class AggregatedRoleSweep(pulumi.dynamic.Resource, module="knative-fleet",
                          name="AggregatedRoleSweep"):
    """Deleted after every object of the spoke (see the module docstring)."""

    def __init__(self, name: str, *, spoke: str, roles: list[str], connection: dict[str, Any],
                 plugin_timeout_s: float, opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            _Provider(sweep), name,
            {"id": name, "roles": sorted(roles), "spoke": spoke,
             "connection": pulumi.Output.secret(connection),
             "pluginTimeoutSeconds": plugin_timeout_s},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
