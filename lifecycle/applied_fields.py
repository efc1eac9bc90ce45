"""The fields of a live object one field manager applied, and a digest of them: how the
CRDs-first step (lifecycle.crds_first) tells that a CRD it holds drifted without keeping
the CRD's body, nor the live object, in the state.

Server-side apply records, per manager, the set of fields it owns (`managedFields`,
`fieldsV1`). A field another manager changes, or removes, leaves the fleet's set, and a
CRD deleted and made again by someone else has no set of the fleet's at all: the fleet's
fields of the live object, and so their digest, change exactly when someone else changed
what the fleet applied. Fields others add beside the fleet's (a webhook's CA bundle)
change nothing.

`fieldsV1` keys: `f:<name>` a field of a map, `k:<json>` the item of a list whose keys
have these values, `v:<json>` a set item, `i:<n>` an item by index, `.` the node itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

MISSING = {"(missing)": True}


def owned_fields(obj: Mapping[str, Any], manager: str) -> dict[str, Any]:
    """The `fieldsV1` sets `manager` applied (operation Apply, on the object itself, not
    a subresource), merged."""
    merged: dict[str, Any] = {}
    for entry in ((obj.get("metadata") or {}).get("managedFields") or []):
        if (entry.get("manager") == manager and entry.get("operation") == "Apply"
                and not entry.get("subresource")):
            _merge(merged, entry.get("fieldsV1") or {})
    return merged


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, sub in more.items():
        if isinstance(sub, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], sub)
        else:
            into[key] = json.loads(json.dumps(sub))


def project(value: Any, fields: Mapping[str, Any]) -> Any:
    """`value` reduced to the fields of `fields` (a fieldsV1 set); a leaf, or a node
    owned whole, is its value."""
    children = {k: v for k, v in fields.items() if k != "."}
    if not children:
        return value
    if isinstance(value, Mapping):
        return {key[2:]: project(value[key[2:]], sub) for key, sub in sorted(children.items())
                if key.startswith("f:") and key[2:] in value}
    if isinstance(value, list):
        return [_item(value, key, sub) for key, sub in sorted(children.items())]
    return value


def _item(items: list, key: str, sub: Mapping[str, Any]) -> Any:
    kind, _, text = key.partition(":")
    if kind == "k":
        want = json.loads(text)
        for item in items:
            if isinstance(item, Mapping) and all(item.get(k) == v for k, v in want.items()):
                return project(item, sub)
        return MISSING
    if kind == "v":
        value = json.loads(text)
        return value if value in items else MISSING
    if kind == "i":
        index = int(text)
        return project(items[index], sub) if 0 <= index < len(items) else MISSING
    return MISSING


def applied_digest(obj: Mapping[str, Any], manager: str) -> str:
    """A short digest of the fields `manager` applied, as the live object holds them (of
    MISSING when it owns none: someone else made the object)."""
    fields = owned_fields(obj, manager)
    text = json.dumps(project(obj, fields) if fields else MISSING, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]
