"""What a change of a CRDs-first step (fleet.crds_first) does to the CRDs it holds, named
one by one as the review names a typed resource's change: the step's old and new inputs
hold the CRD bodies, its old outputs the CRDs a refresh found drifted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core import crd_manifest


def _bodies(state: Mapping[str, Any]) -> dict[str, str] | None:
    """{name: the body's JSON} of the CRDs a step's state holds; None when unknown."""
    manifest = (state.get("inputs") or {}).get("manifest")
    if not isinstance(manifest, str):
        return None
    try:
        bodies = crd_manifest.decode(manifest)
    except (ValueError, OSError):
        return None
    return {b["metadata"]["name"]: json.dumps(b, sort_keys=True) for b in bodies}


def crd_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """((op, CRD name), ...): `created`, `updated` or `removed` from what the step
    holds, and `reapplied` for a CRD a refresh found drifted."""
    before, after = _bodies(old), _bodies(new)
    if after is None:
        return ()
    out: list[tuple[str, str]] = []
    if before is None:
        before = {}
    for name in sorted(after.keys() | before.keys()):
        if name not in before:
            out.append(("created", name))
        elif name not in after:
            out.append(("removed", name))
        elif before[name] != after[name]:
            out.append(("updated", name))
    changed = {name for _, name in out}
    for drift in (old.get("outputs") or {}).get("drifted") or []:
        name = str((drift or {}).get("name", ""))
        if name and name not in changed:
            out.append(("reapplied", name))
    return tuple(out)
