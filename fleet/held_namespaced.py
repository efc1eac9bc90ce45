"""A component's namespaced objects that no user setting shapes field by field, or only a
few fields of (an autoscaler's replicas), held and applied by one step, as plain data:
its ServiceAccounts, Roles, RoleBindings, Services, HorizontalPodAutoscalers and
PodDisruptionBudgets in the install namespace.

As for its ClusterRoles (fleet.held_rbac): a typed resource keeps each object three
times in the state, with its URN, provider, dependencies and source position, about 3.5
kB for a ServiceAccount of a few hundred bytes; a Knative release has about fifty of
these per spoke. So each component's are one dynamic resource (components.held_objects),
after the install's anchor: it applies them with the anchor's owner reference (server-
side apply, the fleet's field manager, forced), holds their keys
(`Kind/namespace/name`), a digest and the bodies once, compressed, and of the live
objects a digest each of the fields the fleet applied (drift). Its delete deletes them,
after everything that depends on it.

The review lists a held object's changed fields under its name, as it lists a typed
resource's (review.held_objects). Not held: what a user's spec shapes field by field or
Knative fills in (ConfigMaps, Secrets, Deployments, Jobs), and the Secret reads' Role
and RoleBinding (knative.secret_reads), which are not the anchor's. Typed ones an
earlier release's state holds are let go as fleet.held_typed says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.crd_manifest import encode, held_key
from fleet.plan import ComponentInstall, PlannedObject, Role
from knative import manifests
from knative.plan import Stage

HELD_KINDS = ("ServiceAccount", "Role", "RoleBinding", "Service", "HorizontalPodAutoscaler",
              "PodDisruptionBudget")
# The step's inputs (step_inputs' keys): the registrar gives each as an output of the
# anchor's uid.
INPUTS = ("id", "spoke", "objects", "digest", "manifest", "connection", "pluginTimeoutSeconds")


def step_name(spoke: str, namespace: str) -> str:
    """The resource name of a component's namespaced-objects step."""
    return f"{spoke}:{namespace}/namespaced-objects"


def is_held(stage: Stage, obj: PlannedObject) -> bool:
    """Whether the namespaced-objects step holds `obj`: an object of HELD_KINDS the
    anchor owns, with no field the cluster owns."""
    return (stage is Stage.NAMESPACED and obj.body["kind"] in HELD_KINDS and obj.owned
            and obj.role is Role.PLAIN and not obj.ignore_changes)


def held_objects(component: ComponentInstall) -> tuple[PlannedObject, ...]:
    """The objects the component's namespaced-objects step holds, in registration order."""
    return tuple(o for s in component.stages for o in s.objects if is_held(s.stage, o))


def step_inputs(component: ComponentInstall, spoke: str, connection: Any,
                plugin_timeout_s: float, owner: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs of the component's namespaced-objects step (components.held_objects
    registers them; the offline review plans the same): the objects' keys, the digest its
    provider's diff compares, the bodies, each with `owner` (the anchor's owner
    reference: knative.manifests.owner_reference), and how to reach the spoke."""
    assert component.namespaced_objects is not None
    bodies = [manifests.with_owner(o.registered_body, dict(owner))
              for o in held_objects(component)]
    digest, manifest = encode(bodies)
    return {"id": component.namespaced_objects, "spoke": spoke,
            "objects": [held_key(b) for b in bodies], "digest": digest,
            "manifest": manifest, "connection": connection,
            "pluginTimeoutSeconds": plugin_timeout_s}
