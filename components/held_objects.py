"""The steps that apply and hold a component's objects (fleet.held_rbac and
fleet.held_namespaced say why): `ClusterRbac`, its ClusterRoles and ClusterRoleBindings,
in the cluster stage, and `NamespacedObjects`, its ServiceAccounts, Roles, RoleBindings,
Services, autoscalers and disruption budgets, after its anchor; everything of the
component after each stage depends on its step.

Create applies every object (server-side apply, the fleet's field manager, forced) and
records a digest of the fields it applied to each; update does the same when the objects
it holds change (an upgrade, a role a release adds: one it drops is deleted) or a
refresh found them drifted. A refresh (`read`) names the objects whose applied fields
changed or that are gone. Its delete deletes them all. It holds how to reach the spoke
(no credential: the exec plugin runs at apply time), marked secret. The steps themselves
are in `lifecycle.held_objects`.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import UpdateResult

from components.dynamic_provider import HoldingProvider
from core.resource_types import CLUSTER_RBAC, NAMESPACED_OBJECTS


class _HeldObjectsProvider(HoldingProvider):
    """Both steps' lifecycle: lifecycle.held_objects."""

    def apply(self, props: dict[str, Any]) -> dict[str, Any]:
        from lifecycle import held_objects

        return held_objects.apply_objects(props)

    def read_drift(self, props: dict[str, Any]) -> list[dict[str, str]]:
        from lifecycle import held_objects

        return held_objects.read_drift(props)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        """Applies the objects it holds now, then deletes those it held before and no
        longer does."""
        from lifecycle import held_objects

        gone = sorted(set(olds.get("objects") or []) - set(news.get("objects") or []))
        recorded = held_objects.apply_objects(news, gone)
        return UpdateResult(outs={**self.outs(news), **recorded})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from lifecycle import held_objects

        held_objects.delete_objects(props)


# Stack states name these classes (`components.held_objects._ClusterRbacProvider`, ...):
# they keep their module and name (components.dynamic_provider says why).
class _ClusterRbacProvider(_HeldObjectsProvider):
    kind = CLUSTER_RBAC


class _NamespacedProvider(_HeldObjectsProvider):
    kind = NAMESPACED_OBJECTS


class _Holding(pulumi.dynamic.Resource):
    """A holding step: its connection marked secret."""

    digest: pulumi.Output[str]

    def __init__(self, provider: HoldingProvider, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            provider, name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))


class ClusterRbac(_Holding, module="knative-fleet", name=CLUSTER_RBAC.name):
    """Applies and holds a component's ClusterRoles and ClusterRoleBindings."""

    def __init__(self, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: fleet.held_rbac.step_inputs."""
        super().__init__(_ClusterRbacProvider(), name, inputs, opts)


class NamespacedObjects(_Holding, module="knative-fleet", name=NAMESPACED_OBJECTS.name):
    """Applies and holds a component's ServiceAccounts, Roles, RoleBindings, Services,
    autoscalers and disruption budgets."""

    def __init__(self, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: fleet.held_namespaced.step_inputs (its bodies need the anchor's uid:
        the values may be outputs)."""
        super().__init__(_NamespacedProvider(), name, inputs, opts)
