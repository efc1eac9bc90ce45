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

The delete steps themselves are in `lifecycle.aggregated_roles`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi

from components.dynamic_provider import GuardProvider
from core.resource_types import AGGREGATED_ROLE_GUARD, AGGREGATED_ROLE_SWEEP


# The delete steps by the names stack states hold: a pickled `_Provider` names
# `components.aggregated_role_guard.settle_and_delete` or `.sweep` as its `on_delete`,
# so these two functions keep their module and names too.
def settle_and_delete(props: dict[str, Any]) -> None:
    """The guard's delete: wait for the controller to catch up, delete, free the name."""
    from lifecycle import aggregated_roles

    aggregated_roles.settle_and_delete(props)


def sweep(props: dict[str, Any]) -> None:
    """The sweep's delete: no aggregated role of the install may exist again."""
    from lifecycle import aggregated_roles

    aggregated_roles.sweep(props)


# Stack states name this class (`components.aggregated_role_guard._Provider`) with an
# `__dict__` of `{"on_delete": settle_and_delete or sweep}`: it keeps its module, name
# and attribute (components.dynamic_provider says why). The guard and the sweep share it:
# their kinds have the same diff keys.
class _Provider(GuardProvider):
    kind = AGGREGATED_ROLE_GUARD

    def __init__(self, on_delete: Callable[[dict[str, Any]], None]) -> None:
        self.on_delete = on_delete

    def delete_step(self, props: dict[str, Any]) -> None:
        self.on_delete(props)

    def delete_failed(self, props: dict[str, Any], exc: Exception) -> str:
        what = props.get("role") or "the aggregated ClusterRoles"
        return (f"spoke {props.get('spoke')!r}: could not remove {what} safely: "
                f"{type(exc).__name__}: {exc}. Fix: make sure the spoke and the hub are "
                "reachable (the access provider's plugin runs for this step), then run "
                "the command again; nothing was deleted that the run did not report.")


class AggregatedRoleGuard(pulumi.dynamic.Resource, module="knative-fleet",
                          name=AGGREGATED_ROLE_GUARD.name):
    """Deleted after the role's feeders and before the role (see the module docstring)."""

    def __init__(self, name: str, *, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: lifecycle.aggregated_roles.guard_inputs, its connection marked
        secret here."""
        super().__init__(_Provider(settle_and_delete), name, _secret_connection(inputs),
                         _with_secret_connection(opts))


class AggregatedRoleSweep(pulumi.dynamic.Resource, module="knative-fleet",
                          name=AGGREGATED_ROLE_SWEEP.name):
    """Deleted after every object of the spoke (see the module docstring)."""

    def __init__(self, name: str, *, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: lifecycle.aggregated_roles.sweep_inputs, its connection marked
        secret here."""
        super().__init__(_Provider(sweep), name, _secret_connection(inputs),
                         _with_secret_connection(opts))


def _secret_connection(inputs: dict[str, Any]) -> dict[str, Any]:
    return {**inputs, "connection": pulumi.Output.secret(inputs["connection"])}


def _with_secret_connection(opts: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"]))
