"""A component's cluster-wide RBAC, held and applied by one step, as plain data.

A typed resource keeps its object three times in the state (its inputs, the live object
with its managedFields, a copy of the inputs), plus its URN, provider, dependencies and
source position: about 4 kB for a ClusterRole or ClusterRoleBinding of a few hundred
bytes. A Knative release has about seventy of them per spoke, a quarter of a spoke's
state, which the engine writes again at every checkpoint. So each component's
ClusterRoles and ClusterRoleBindings are one dynamic resource (components.held_rbac), as
its CRDs are (fleet.crds_first): it applies them (server-side apply, the fleet's field
manager, forced), holds their names, a digest and the bodies once, compressed, as its
inputs, and of the live objects only a digest each of the fields the fleet applied
(what a refresh compares: drift). Its delete deletes them, after everything of the
component that depends on it, as the engine deleted the typed ones.

Not held: the aggregated ClusterRoles (their guard registers them: components.
aggregated_role_guard), and any role whose fields the cluster owns (`ignore_changes`):
both stay typed. Typed ones an earlier release's state holds are let go as
fleet.held_typed says.
"""

from __future__ import annotations

from typing import Any

from core.crd_manifest import encode, held_key
from fleet.plan import ComponentInstall, PlannedObject, Role
from knative.plan import Stage

HELD_KINDS = ("ClusterRole", "ClusterRoleBinding")


def step_name(spoke: str, namespace: str) -> str:
    """The resource name of a component's cluster-RBAC step."""
    return f"{spoke}:{namespace}/cluster-rbac"


def is_held(stage: Stage, obj: PlannedObject) -> bool:
    """Whether the cluster-RBAC step holds `obj`: a ClusterRole or ClusterRoleBinding of
    the cluster stage, not aggregated, with no field the cluster owns."""
    return (stage is Stage.CLUSTER and obj.body["kind"] in HELD_KINDS
            and obj.role is Role.PLAIN and not obj.owned and not obj.ignore_changes)


def held_objects(component: ComponentInstall) -> tuple[PlannedObject, ...]:
    """The objects the component's cluster-RBAC step holds, in registration order."""
    return tuple(o for s in component.stages for o in s.objects if is_held(s.stage, o))


def step_inputs(component: ComponentInstall, spoke: str, connection: Any,
                plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of the component's cluster-RBAC step (components.held_rbac registers
    them; the offline review plans the same): the objects' keys, the digest its
    provider's diff compares, the bodies and how to reach the spoke."""
    assert component.cluster_rbac is not None
    bodies = [o.registered_body for o in held_objects(component)]
    digest, manifest = encode(bodies)
    return {"id": component.cluster_rbac, "spoke": spoke,
            "objects": [held_key(b) for b in bodies], "digest": digest,
            "manifest": manifest, "connection": connection,
            "pluginTimeoutSeconds": plugin_timeout_s}
