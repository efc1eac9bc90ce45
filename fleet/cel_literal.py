"""Plain data as a CEL literal that Kubernetes' type checker takes: JSON's string escapes
are CEL's, and the members of a list or map of mixed types are each wrapped in dyn()
(Kubernetes' CEL takes only homogeneous list and map literals)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# A literal's static type, as far as the checker's joins go: "string", "int", "bool",
# ("list", T), ("map", T); ANY for the element of an empty literal, DYN for dyn().
ANY, DYN = "any", "dyn"
CelType = str | tuple[str, Any]


def _join(a: CelType | None, b: CelType) -> CelType | None:
    """The type both a and b are assignable to, None when the checker would refuse them
    side by side: it unifies an empty literal's free type with any other, and nothing
    else, not even `map(string, dyn)` with `map(string, list(string))`."""
    if a is None or a == ANY:
        return b
    if b == ANY:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        inner = _join(a[1], b[1])
        return None if inner is None else (a[0], inner)
    return a if a == b else None


def _literal(value: Any) -> tuple[str, CelType]:
    """(CEL text, its type)."""
    if isinstance(value, bool):
        return ("true" if value else "false"), "bool"
    if isinstance(value, str):
        return json.dumps(value), "string"
    if isinstance(value, int):
        return json.dumps(value), "int"
    if isinstance(value, Mapping):
        keys = [json.dumps(str(k)) for k in value]
        members = [_literal(v) for v in value.values()]
    elif isinstance(value, (list, tuple)):
        keys = []
        members = [_literal(v) for v in value]
    else:
        raise TypeError(f"no CEL literal for {type(value).__name__}")
    joined: CelType | None = ANY
    for _, kind in members:
        joined = _join(joined, kind)
        if joined is None:
            break
    texts = [text for text, _ in members]
    if joined is None:
        texts, joined = [f"dyn({t})" for t in texts], DYN
    if isinstance(value, Mapping):
        pairs = ", ".join(f"{k}: {t}" for k, t in zip(keys, texts, strict=True))
        return "{" + pairs + "}", ("map", joined)
    return "[" + ", ".join(texts) + "]", ("list", joined)


def cel(value: Any) -> str:
    """A CEL literal of plain data."""
    return _literal(value)[0]
