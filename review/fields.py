"""Field-level diffs of one object, in Pulumi's property-path syntax
(`spec.template.spec.containers[0].image`, `data["domain-template"]`).

The engine's `detailedDiff` names the changed paths but not the values, and names a
whole subtree (`spec`) when anything under it changed; it is null for dynamic
resources. The values come from the old and new inputs, and a changed subtree is
walked down to the leaves that differ, so a reviewer sees the exact keys.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Segment = str | int
# Keys Pulumi writes after a dot; any other key is written ["quoted"].
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
MISSING = object()  # no value at a path (not None: a null is a value)
SECRET = "[secret]"
# Objects whose data values are never shown, whatever the engine's JSON holds.
SECRET_KINDS = {"Secret"}
SECRET_FIELDS = ("data", "stringData")
# The engine's stand-in, in `pulumi preview --json`, for a value only known after apply,
# and what a reviewer reads instead.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
COMPUTED = "(known after apply)"


def readable(value: Any) -> Any:
    """The value with the engine's unknown stand-in written as a reviewer reads it."""
    if value == UNKNOWN:
        return COMPUTED
    if isinstance(value, dict):
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


@dataclass(frozen=True)
class FieldChange:
    path: str
    kind: str  # add | delete | update, "-replace" appended when it forces a replacement
    old: Any = None  # absent when kind starts with "add"
    new: Any = None  # absent when kind starts with "delete"


def parse_path(path: str) -> list[Segment]:
    """`a.b[0]["c.d"]` -> ["a", "b", 0, "c.d"]."""
    out: list[Segment] = []
    i = 0
    while i < len(path):
        c = path[i]
        if c == ".":
            i += 1
        elif c == "[":
            end = path.index("]", i)
            if path[i + 1] == '"':
                text, end = _quoted(path, i + 1)
                out.append(text)
                end = path.index("]", end)
            else:
                out.append(int(path[i + 1:end]))
            i = end + 1
        else:
            end = min((j for j in (path.find(".", i), path.find("[", i)) if j >= 0),
                      default=len(path))
            out.append(path[i:end])
            i = end
    return out


def _quoted(path: str, start: int) -> tuple[str, int]:
    """The JSON string starting at path[start] and the index after it."""
    value, end = json.JSONDecoder().raw_decode(path, start)
    return value, end


def format_path(segments: list[Segment]) -> str:
    out = ""
    for s in segments:
        if isinstance(s, int):
            out += f"[{s}]"
        elif _IDENT.fullmatch(s):
            out += f".{s}" if out else s
        else:
            out += f"[{json.dumps(s)}]"
    return out


def lookup(obj: Any, segments: list[Segment]) -> Any:
    """The value at segments, or MISSING."""
    for s in segments:
        if isinstance(s, int) and isinstance(obj, list) and 0 <= s < len(obj):
            obj = obj[s]
        elif isinstance(s, str) and isinstance(obj, dict) and s in obj:
            obj = obj[s]
        else:
            return MISSING
    return obj


def diff_values(segments: list[Segment], old: Any, new: Any, suffix: str = "") \
        -> list[FieldChange]:
    """The leaves under segments where old and new differ (MISSING: absent)."""
    if old is MISSING and new is MISSING:
        return []
    if old is MISSING:
        return [FieldChange(format_path(segments), "add" + suffix, new=readable(new))]
    if new is MISSING:
        return [FieldChange(format_path(segments), "delete" + suffix, old=readable(old))]
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in sorted(old.keys() | new.keys()):
            out += diff_values([*segments, key], old.get(key, MISSING),
                               new.get(key, MISSING), suffix)
        return out
    if isinstance(old, list) and isinstance(new, list):
        return _diff_lists(segments, old, new, suffix)
    if old == new:
        return []
    return [FieldChange(format_path(segments), "update" + suffix, old=readable(old),
                        new=readable(new))]


def _diff_lists(segments: list[Segment], old: list, new: list, suffix: str) \
        -> list[FieldChange]:
    """Items matched as a sequence, so one inserted rule reads as one added item (at
    its new index) rather than as every later item changed; changed items are walked
    down pairwise, the rest are added (new index) or removed (old index)."""
    keys = [json.dumps(x, sort_keys=True, default=str) for x in old]
    news = [json.dumps(x, sort_keys=True, default=str) for x in new]
    out: list[FieldChange] = []
    matcher = difflib.SequenceMatcher(a=keys, b=news, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for k in range(paired):
            out += diff_values([*segments, j1 + k], old[i1 + k], new[j1 + k], suffix)
        for i in range(i1 + paired, i2):
            out += diff_values([*segments, i], old[i], MISSING, suffix)
        for j in range(j1 + paired, j2):
            out += diff_values([*segments, j], MISSING, new[j], suffix)
    return out


def _roots(detailed: Mapping[str, Any]) -> list[tuple[list[Segment], str]]:
    """The engine's paths cut at their first list index (the engine compares lists item
    by item; `_diff_lists` matches them), without paths inside another; each with its
    kind, "-replace" when any path under it forces a replacement."""
    roots: dict[tuple[Segment, ...], str] = {}
    for path, how in detailed.items():
        segments = parse_path(path)
        cut = next((i for i, s in enumerate(segments) if isinstance(s, int)), len(segments))
        root = tuple(segments[:cut])
        kind = str((how or {}).get("kind", "update"))
        if root in roots and cut < len(segments):
            kind = "update-replace" if "replace" in kind + roots[root] else "update"
        roots[root] = kind
    kept = [r for r in roots if not any(r[:len(o)] == o and r != o for o in roots)]
    return [(list(r), roots[r]) for r in sorted(kept, key=lambda r: format_path(list(r)))]


def _state(state: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    return dict((state or {}).get(key) or {})


def object_diff(old_state: Mapping[str, Any] | None, new_state: Mapping[str, Any] | None,
                detailed: Mapping[str, Any] | None) -> list[FieldChange]:
    """The field changes of one updated or replaced object: under every path of the
    engine's detailedDiff, else over the whole inputs (detailedDiff null or empty)."""
    old_in, new_in = _state(old_state, "inputs"), _state(new_state, "inputs")
    old_out = _state(old_state, "outputs")
    out: list[FieldChange] = []
    for segments, kind in _roots(detailed or {}):
        suffix = "-replace" if kind.endswith("-replace") else ""
        old = lookup(old_in, segments)
        if old is MISSING:
            old = lookup(old_out, segments)
        found = diff_values(segments, old, lookup(new_in, segments), suffix)
        # A difference against the live object that the inputs do not show (drift).
        out += found or [FieldChange(format_path(segments), kind)]
    if not detailed:
        out = diff_values([], old_in, new_in)
    return mask_secrets(out, (new_state or old_state or {}).get("type", ""))


def mask_secrets(changes: list[FieldChange], type_: str) -> list[FieldChange]:
    """Secret values become "[secret]": a PR comment is no place for them."""
    if type_.rpartition(":")[2] not in SECRET_KINDS:
        return changes
    out = []
    for c in changes:
        if c.path.startswith(SECRET_FIELDS):
            c = FieldChange(c.path, c.kind, SECRET if c.old is not None else None,
                            SECRET if c.new is not None else None)
        out.append(c)
    return out
