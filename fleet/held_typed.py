"""Which typed resources of objects a step now holds a run still registers, as plain data.

A component's CRDs are held in the state by its CRDs-first step (fleet.crds_first), its
ClusterRoles and ClusterRoleBindings by its cluster-RBAC step (fleet.held_rbac), its
ServiceAccounts, Roles, RoleBindings and Services by its namespaced-objects step
(fleet.held_namespaced): their names, a digest, the bodies once, compressed; not as
typed resources, which keep each object three times (inputs, live object, a copy of the
inputs), written again at every checkpoint. A state an earlier release wrote still holds
the typed resources, and the engine deletes from the spoke whatever leaves the program
unless the state says to keep it (`retainOnDelete`). So:

- a typed resource the state keeps (`retainOnDelete`: a CRD with the default
  `deleteCrdsOnDestroy: false`) leaves the program: the engine takes it out of the
  state, the object stays;
- a typed resource the state would delete (a CRD with `deleteCrdsOnDestroy: true`, every
  other typed resource of a held object) is registered once more, as it is, but kept on
  delete, after its step; the next run lets it go.

This release writes no such typed resource the state would delete. The stack output
`typedHeld` names the types of which the run that wrote it registered none once more (a
typed resource of the same type that no step holds, the Secret reads' Role, is the
program's own and stays): a later run of this release then reads no state. Without it,
or naming fewer types (a first run, an earlier release's state, a run that kept some),
the run reads the state (`pulumi stack export`) to know which typed resources it holds
and how.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from core.resource_types import CRD_TYPE, HELD_TYPES
from fleet.held_namespaced import held_objects as namespaced_held
from fleet.held_rbac import held_objects as rbac_held
from fleet.plan import FleetPlan

__all__ = ["CRD_TYPE", "HELD_TYPES", "HELD_OUTPUT", "held", "keeps_typed",
           "state_needs_reading", "typed_deleted_with_state", "typed_kept", "typed_key"]
# Stack output: HELD_TYPES, when the run registered no typed resource of them that the
# engine would delete.
HELD_OUTPUT = "typedHeld"


def state_needs_reading(last_outputs: Mapping[str, Any]) -> bool:
    """Whether the run must read the state for typed resources: the last recorded run
    did not say it left none of every held type."""
    said = last_outputs.get(HELD_OUTPUT)
    return not isinstance(said, list) or not set(HELD_TYPES) <= set(said)


def _resource_name(urn: str) -> str:
    parts = urn.split("::", 3)
    return parts[3] if len(parts) == 4 else ""


def typed_key(type_token: str, name: str) -> str:
    """One typed resource by its type and its resource name (a ServiceAccount, a Service
    and a Deployment of the same name share the resource name `<spoke>:<ns>/<name>`)."""
    return f"{type_token}::{name}"


def typed_deleted_with_state(export: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """{spoke: typed_key of each}: the typed resources of the held types in a `pulumi
    stack export` document that the engine would delete from the spoke if the program let
    them go (no `retainOnDelete`). Resource names are `<spoke>:<name>`."""
    out: dict[str, set[str]] = {}
    for resource in ((export.get("deployment") or {}).get("resources") or []):
        if resource.get("type") not in HELD_TYPES or resource.get("retainOnDelete"):
            continue
        name = _resource_name(str(resource.get("urn", "")))
        spoke, sep, _ = name.partition(":")
        if sep and spoke:
            out.setdefault(spoke, set()).add(typed_key(str(resource["type"]), name))
    return {spoke: frozenset(names) for spoke, names in out.items()}


def held(registered: int) -> list[str] | bool:
    """The `typedHeld` output of a run that registers `registered` typed resources of
    held objects once more: HELD_TYPES when it is none, else False."""
    return False if registered else list(HELD_TYPES)


def typed_kept(plan: FleetPlan) -> FleetPlan:
    """`plan` with no cluster-RBAC or namespaced-objects step: every object they would
    hold registered typed, as before those steps. For the package's Fleet, whose program
    cannot read its own state (`pulumi stack export`) to learn which typed resources it
    holds: letting one go would delete it from the spoke."""
    spokes = {}
    for name, spoke in plan.spokes.items():
        install = spoke.install
        if install is not None:
            install = dataclasses.replace(install, components=tuple(
                dataclasses.replace(c, cluster_rbac=None, namespaced_objects=None)
                for c in install.components))
        spokes[name] = dataclasses.replace(spoke, install=install)
    return dataclasses.replace(plan, spokes=spokes)


def keeps_typed(plan: FleetPlan) -> bool:
    """Whether `plan` registers typed some object a holding step would hold
    (typed_kept): its run cannot say `typedHeld`."""
    return any((c.cluster_rbac is None and rbac_held(c))
               or (c.namespaced_objects is None and namespaced_held(c))
               for s in plan.spokes.values() if s.install is not None
               for c in s.install.components)
