"""What a change of a step that holds objects (a CRDs-first step: fleet.crds_first; a
cluster-RBAC or namespaced-objects step: fleet.held_rbac, fleet.held_namespaced) does to
the objects it holds, named one by one as the
review names a typed resource's change: the step's old and new inputs hold the bodies,
its old outputs the objects a refresh found drifted."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from core import crd_manifest
from review.fields import FieldChange, diff_values

Key = Callable[[Mapping[str, Any]], str]


def crd_key(body: Mapping[str, Any]) -> str:
    """A CRD by its name."""
    return str(body["metadata"]["name"])


kind_key = crd_manifest.held_key  # `Kind/name` or `Kind/namespace/name`


def _decode(state: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The bodies a step's state holds (its `manifest` input); None when unknown."""
    manifest = (state.get("inputs") or {}).get("manifest")
    if not isinstance(manifest, str):
        return None
    try:
        return crd_manifest.decode(manifest)
    except (ValueError, OSError):
        return None


def held_bodies(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The bodies a step's state holds; none when unknown."""
    return _decode(state) or []


def _bodies(state: Mapping[str, Any], key: Key) -> dict[str, str] | None:
    """{key: the body's JSON} of the objects a step's state holds; None when unknown."""
    bodies = _decode(state)
    return None if bodies is None else {key(b): json.dumps(b, sort_keys=True) for b in bodies}


def held_changes(old: Mapping[str, Any], new: Mapping[str, Any], key: Key = crd_key
                 ) -> tuple[tuple[str, str], ...]:
    """((op, object), ...): `created`, `updated`, `replaced` (a binding whose roleRef
    changed) or `removed` from what the step holds, and `reapplied` for an object a
    refresh found drifted."""
    before, after = _bodies(old, key), _bodies(new, key)
    if after is None:
        return ()
    if before is None:
        return _against_names(old, new, after)
    out: list[tuple[str, str]] = []
    for name in sorted(after.keys() | before.keys()):
        if name not in before:
            out.append(("created", name))
        elif name not in after:
            out.append(("removed", name))
        elif before[name] != after[name]:
            # A binding's roleRef cannot change: the step deletes and makes it again.
            roles = [json.loads(b).get("roleRef") for b in (before[name], after[name])]
            out.append(("replaced" if roles[0] != roles[1] else "updated", name))
    changed = {name for _, name in out}
    for drift in (old.get("outputs") or {}).get("drifted") or []:
        name = str((drift or {}).get("name", ""))
        if name and name not in changed:
            out.append(("reapplied", name))
    return tuple(out)


# The output of each holding step that names what it holds.
NAMES = ("crds", "objects")


def _against_names(old: Mapping[str, Any], new: Mapping[str, Any], after: Mapping[str, str]
                   ) -> tuple[tuple[str, str], ...]:
    """held_changes when the old state has no bodies: a step that did not exist, or whose
    inputs a saved refresh rewrote from its outputs (which keep the names and the digest,
    not the bodies). Its names tell what it held; the digests whether any body changed,
    not which: each held one is then `updated`."""
    outputs = old.get("outputs") or {}
    held = next((outputs[k] for k in NAMES if isinstance(outputs.get(k), list)), None)
    if held is None:
        return tuple(("created", name) for name in sorted(after))
    changed = outputs.get("digest") != (new.get("inputs") or {}).get("digest")
    drifted = {str((d or {}).get("name", "")) for d in outputs.get("drifted") or []}
    out = []
    for name in sorted(after.keys() | set(held)):
        if name not in held:
            out.append(("created", name))
        elif name not in after:
            out.append(("removed", name))
        elif changed:
            out.append(("updated", name))
        elif name in drifted:
            out.append(("reapplied", name))
    return tuple(out)


def crd_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """held_changes of a CRDs-first step, each CRD by its name."""
    return held_changes(old, new, crd_key)


def object_changes(old: Mapping[str, Any], new: Mapping[str, Any]
                   ) -> tuple[tuple[str, str], ...]:
    """held_changes of a cluster-RBAC or namespaced-objects step, each object as
    `Kind/name` or `Kind/namespace/name`."""
    return held_changes(old, new, kind_key)


def held_field_changes(old: Mapping[str, Any], new: Mapping[str, Any], key: Key
                       ) -> list[FieldChange]:
    """The field changes of each object a holding step updates, under the object's name
    (`["ClusterRole/x"].rules[0].verbs[1]`): what the engine's diff of the step, a
    compressed manifest, cannot show."""
    before, after = _decoded(old, key), _decoded(new, key)
    out: list[FieldChange] = []
    for name in sorted(before.keys() & after.keys()):
        if before[name] != after[name]:
            out += diff_values([name], before[name], after[name])
    return out


def _decoded(state: Mapping[str, Any], key: Key) -> dict[str, dict[str, Any]]:
    return {key(b): b for b in held_bodies(state)}
