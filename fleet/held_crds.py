"""Which typed CustomResourceDefinition resources a run still registers, as plain data.

A component's CRDs are held in the state by its CRDs-first step alone (fleet.crds_first:
their names, a digest, the bodies once, compressed), not as typed
`CustomResourceDefinition` resources: those kept each schema three times (inputs, live
object, a copy of the inputs), about half of a spoke's state, written again at every
checkpoint. A state an earlier release wrote still holds the typed resources, and the
engine deletes from the spoke whatever leaves the program unless the state says to keep
it (`retainOnDelete`). So:

- a typed CRD the state keeps (`retainOnDelete`, the default `deleteCrdsOnDestroy:
  false`) leaves the program: the engine takes it out of the state, the CRD stays;
- a typed CRD the state would delete (`deleteCrdsOnDestroy: true` in the run that wrote
  it) is registered once more, as it is, but kept on delete; the next run lets it go.

This release writes no typed CRD the state would delete. The stack output `crdsHeld`
says that the run that wrote it registered no typed CRD at all: a later run then reads no
state. Without it (a first run, an earlier release's state, a run that kept some), the
run reads the state (`pulumi stack export`) to know which typed CRDs it holds and how.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
# Stack output: True when the run registered no typed CRD (the state holds none that
# the engine would delete).
HELD_OUTPUT = "crdsHeld"


def state_needs_reading(last_outputs: Mapping[str, Any]) -> bool:
    """Whether the run must read the state for typed CRDs: the last recorded run did
    not say it left none."""
    return last_outputs.get(HELD_OUTPUT) is not True


def _resource_name(urn: str) -> str:
    parts = urn.split("::", 3)
    return parts[3] if len(parts) == 4 else ""


def typed_crds_deleted_with_state(export: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """{spoke: resource names}: the typed CRDs of a `pulumi stack export` document that
    the engine would delete from the spoke if the program let them go (no
    `retainOnDelete`). Resource names are `<spoke>:<crd name>`."""
    out: dict[str, set[str]] = {}
    for resource in ((export.get("deployment") or {}).get("resources") or []):
        if resource.get("type") != CRD_TYPE or resource.get("retainOnDelete"):
            continue
        name = _resource_name(str(resource.get("urn", "")))
        spoke, sep, _ = name.partition(":")
        if sep and spoke:
            out.setdefault(spoke, set()).add(name)
    return {spoke: frozenset(names) for spoke, names in out.items()}


def held(typed: Mapping[str, Iterable[str]]) -> bool:
    """The `crdsHeld` output of a run that registers `typed`."""
    return not any(list(names) for names in typed.values())
