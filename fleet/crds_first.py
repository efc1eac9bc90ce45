"""A component's CRDs, held and applied by one step, as plain data.

pulumi-kubernetes (4.25) drops its cached OpenAPI schema after every
CustomResourceDefinition it *creates*, and its next call fetches `/openapi/v2` again,
for which the spoke's API server rebuilds the schema of every CRD it serves: one rebuild
per CRD created. And a typed `CustomResourceDefinition` resource keeps its whole schema
three times in the state (inputs, the live object, a copy of the inputs): the release's
CRDs were about half of a spoke's state, which the engine writes again at every
checkpoint. So each component's CRDs are one dynamic resource (components.crds_first):
it applies them (server-side apply with the fleet's field manager, forced, then a wait
for `Established`), holds their names, a digest and the bodies once, compressed, as its
inputs, and of the live CRDs only a digest each of the fields the fleet applied (what a
refresh compares: drift). No typed CRD resource is registered (fleet.held_typed: those an
earlier release's state holds).

Its delete keeps the CRDs, as the operator does, unless the entry says
`deleteCrdsOnDestroy: true` (the step's `deleteOnDestroy`): then it deletes them, after
everything of the component that depends on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.crd_manifest import DELETE_ON_DESTROY, encode
from fleet.plan import ComponentInstall, PlannedObject
from knative.plan import Stage


def step_name(spoke: str, namespace: str) -> str:
    """The resource name of a component's CRDs-first step."""
    return f"{spoke}:{namespace}/crds-first"


def crd_objects(component: ComponentInstall) -> tuple[PlannedObject, ...]:
    """The component's CRDs, in their registration order."""
    return tuple(o for s in component.stages if s.stage is Stage.CRDS for o in s.objects)


def step_inputs(component: ComponentInstall, spoke: str, connection: Any,
                plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of the component's CRDs-first step (components.crds_first registers
    them; the offline review plans the same): the CRD names, the digest its provider's
    diff compares, the bodies and how to reach the spoke; `deleteOnDestroy` only when
    the entry deletes its CRDs on destroy (a state that keeps them holds the same inputs
    as before that key)."""
    assert component.crds_first is not None
    objects = crd_objects(component)
    bodies = [o.registered_body for o in objects]
    digest, manifest = encode(bodies)
    inputs: dict[str, Any] = {
        "id": component.crds_first, "spoke": spoke,
        "crds": [b["metadata"]["name"] for b in bodies], "digest": digest,
        "manifest": manifest, "connection": connection,
        "pluginTimeoutSeconds": plugin_timeout_s}
    if deletes_on_destroy(objects):
        inputs[DELETE_ON_DESTROY] = True
    return inputs


def deletes_on_destroy(crds: Sequence[PlannedObject]) -> bool:
    """Whether the entry deletes these CRDs on destroy (`deleteCrdsOnDestroy: true`: the
    plan does not keep them on delete)."""
    return any(o.retain_on_delete is False for o in crds)
