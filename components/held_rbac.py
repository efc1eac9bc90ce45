"""A component's ClusterRoles and ClusterRoleBindings applied and held by one step
(fleet.held_rbac says why): `ClusterRbac`, one dynamic resource per component, in the
cluster stage; everything of the component after that stage depends on it.

Create applies every object (server-side apply, the fleet's field manager, forced) and
records a digest of the fields it applied to each; update does the same when the objects
it holds change (an upgrade, a role a release adds: one it drops is deleted) or a refresh
found them drifted. A refresh (`read`) names the objects whose applied fields changed or
that are gone. Its delete deletes them all. It holds how to reach the spoke (no
credential: the exec plugin runs at apply time), marked secret. The steps themselves are
in `lifecycle.held_rbac`.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import UpdateResult

from components.dynamic_provider import HoldingProvider
from core.resource_types import CLUSTER_RBAC


# Stack states name this class (`components.held_rbac._Provider`): it keeps its module
# and name (components.dynamic_provider says why).
class _Provider(HoldingProvider):
    kind = CLUSTER_RBAC

    def apply(self, props: dict[str, Any]) -> dict[str, Any]:
        from lifecycle import held_rbac

        return held_rbac.apply_objects(props)

    def read_drift(self, props: dict[str, Any]) -> list[dict[str, str]]:
        from lifecycle import held_rbac

        return held_rbac.read_drift(props)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Applies the objects it holds now, then deletes those it held before and no
        longer does."""
        from lifecycle import held_rbac

        gone = sorted(set(olds.get("objects") or []) - set(news.get("objects") or []))
        recorded = held_rbac.apply_objects(news, gone)
        return UpdateResult(outs={**self.outs(news), **recorded})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from lifecycle import held_rbac

        held_rbac.delete_objects(props)


class ClusterRbac(pulumi.dynamic.Resource, module="knative-fleet", name=CLUSTER_RBAC.name):
    """Applies and holds a component's ClusterRoles and ClusterRoleBindings (module
    docstring)."""

    digest: pulumi.Output[str]

    def __init__(self, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: fleet.held_rbac.step_inputs, its connection marked secret here."""
        super().__init__(
            _Provider(), name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
