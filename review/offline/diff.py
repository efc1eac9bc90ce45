"""One resource's planned inputs held against its inputs in the last state, as the
engine and the providers would decide its step: `same`, `update` or `replace`, with a
detailedDiff shaped like the live preview's (property paths, "-replace" kinds).

Offline the comparison is of inputs only: the live preview also holds the inputs
against the live object (drift, server-side defaults), which no file here can know.
For the report's purpose the comparison follows the provider where it matters:
- `ignore_changes` paths keep their old values (the engine copies them over);
- `pulumi.com/*` annotations the provider writes on its own are not compared, the
  ones the plan applies (field manager, force, skipAwait) are;
- an empty map, a null or an empty string and a missing one are the same once applied,
  and "1000m" and "1" the same quantity (the provider's checked inputs, which the
  state holds, drop the former and respell the latter);
- a change under a field Kubernetes cannot update in place forces a replacement, as
  pulumi-kubernetes plans it;
- a dynamic resource compares only the keys its provider's `diff` compares, and a
  secret the state holds as ciphertext compares equal (it cannot be read).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from core.names import SKIP_AWAIT_ANNOTATION
from fleet.objects import APPLY_ANNOTATIONS
from review.fields import MISSING, FieldChange, diff_values, lookup, parse_path

PULUMI_PREFIX = "pulumi.com/"
APPLIED_ANNOTATIONS = frozenset({*APPLY_ANNOTATIONS, SKIP_AWAIT_ANNOTATION})
# Fields the API server refuses to change in place, by kind: pulumi-kubernetes plans a
# replacement when one of them changes.
REPLACING_FIELDS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec.selector",),
    "ReplicaSet": ("spec.selector",),
    "DaemonSet": ("spec.selector",),
    "StatefulSet": ("spec.selector", "spec.serviceName", "spec.podManagementPolicy",
                    "spec.volumeClaimTemplates"),
    "Job": ("spec.selector", "spec.template", "spec.completionMode"),
    "RoleBinding": ("roleRef",),
    "ClusterRoleBinding": ("roleRef",),
    "Secret": ("type",),
    "Service": ("spec.clusterIP", "spec.clusterIPs"),
    "PersistentVolumeClaim": ("spec",),
}
# Maps whose values are resource quantities (containers' limits and requests).
QUANTITY_MAPS = frozenset({"limits", "requests", "overhead"})


def _set(obj: dict, segments: list, value: Any) -> None:
    """Sets (or with MISSING removes) the value at segments, creating maps on the way;
    a path through a missing list item is left alone."""
    for s in segments[:-1]:
        nxt = obj[s] if (isinstance(obj, dict) and s in obj) or (
            isinstance(obj, list) and isinstance(s, int) and 0 <= s < len(obj)) else None
        if nxt is None:
            if value is MISSING or not isinstance(obj, dict):
                return
            nxt = obj[s] = {}
        obj = nxt
    last = segments[-1]
    if isinstance(obj, dict):
        if value is MISSING:
            obj.pop(last, None)
        else:
            obj[last] = value
    elif isinstance(obj, list) and isinstance(last, int) and 0 <= last < len(obj) \
            and value is not MISSING:
        obj[last] = value


def with_ignored(old: Mapping[str, Any], new: Mapping[str, Any],
                 paths: Iterable[str]) -> dict[str, Any]:
    """The new inputs with every ignore_changes path holding its old value (absent when
    the old inputs have none), as the engine hands them to the provider."""
    out = copy.deepcopy(dict(new))
    for path in paths:
        segments = parse_path(path)
        old_value = lookup(old, segments)
        _set(out, segments, old_value if old_value is MISSING else copy.deepcopy(old_value))
    return out


def _quantity(value: Any) -> Any:
    """A resource quantity in one spelling ("1000m" and "1" are one CPU)."""
    if not isinstance(value, str):
        return value
    try:
        return f"quantity {parse_quantity(value).normalize()}"
    except (ValueError, ArithmeticError):
        return value


def _pruned(value: Any, key: str = "") -> Any:
    """Nulls and empty strings out (the provider's checked inputs hold neither),
    quantities in one spelling."""
    if isinstance(value, dict):
        quantities = key in QUANTITY_MAPS
        return {k: _quantity(v) if quantities else _pruned(v, k) for k, v in value.items()
                if v is not None and v != ""}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def comparable(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as they are compared: nulls, empty strings and the provider's own
    `pulumi.com/*` annotations out, empty annotation and label maps as absent,
    quantities in one spelling."""
    out = _pruned(dict(inputs))
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        return out
    meta = dict(meta)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        annotations = {k: v for k, v in annotations.items()
                       if not k.startswith(PULUMI_PREFIX) or k in APPLIED_ANNOTATIONS}
        meta["annotations"] = annotations
    for key in ("annotations", "labels"):
        if meta.get(key) in ({}, None):
            meta.pop(key, None)
    out["metadata"] = meta
    return out


def _forces_replace(kind: str, path: str) -> bool:
    return any(path == f or path.startswith((f + ".", f + "[")) for f in
               REPLACING_FIELDS.get(kind, ()))


def detailed_diff(changes: Iterable[FieldChange]) -> dict[str, dict[str, Any]]:
    return {c.path: {"kind": c.kind, "inputDiff": True} for c in changes}


def object_step(type_token: str, old_inputs: Mapping[str, Any] | None,
                new_inputs: Mapping[str, Any], ignore_changes: Iterable[str] = ()
                ) -> tuple[str, dict[str, Any], dict[str, dict[str, Any]]]:
    """(op, the new inputs as the engine holds them, detailedDiff) of one Kubernetes
    object; op is create when the state has none."""
    if old_inputs is None:
        return "create", dict(new_inputs), {}
    effective = with_ignored(old_inputs, new_inputs, ignore_changes)
    changes = diff_values([], comparable(old_inputs), comparable(effective))
    if not changes:
        return "same", effective, {}
    kind = type_token.rpartition(":")[2]
    marked = [FieldChange(c.path, c.kind + "-replace", c.old, c.new)
              if _forces_replace(kind, c.path) else c for c in changes]
    op = "replace" if any(c.kind.endswith("-replace") for c in marked) else "update"
    return op, effective, detailed_diff(marked)


def keys_step(keys: Iterable[str], old_inputs: Mapping[str, Any] | None,
              new_inputs: Mapping[str, Any], replacing: Iterable[str] = ()
              ) -> tuple[str, dict[str, dict[str, Any]]]:
    """(op, detailedDiff) of a resource whose provider compares only `keys` (a dynamic
    resource's `diff`, a provider's config); a key in `replacing` forces a replace."""
    if old_inputs is None:
        return "create", {}
    replacing = set(replacing)
    detailed = {}
    for key in keys:
        old, new = old_inputs.get(key), new_inputs.get(key)
        if not (old == new or new == old):  # a hidden secret on either side is equal
            detailed[key] = {"kind": "update-replace" if key in replacing else "update",
                             "inputDiff": True}
    if not detailed:
        return "same", {}
    replace = any(d["kind"].endswith("-replace") for d in detailed.values())
    return ("replace" if replace else "update"), detailed
