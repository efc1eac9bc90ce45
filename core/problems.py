"""How a pydantic validation error is told to the user: one line per problem, each
with the path of the key as the user wrote it."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

# Validator-wrapper steps pydantic puts into `loc`; they are not keys the user wrote.
_NOT_KEYS = frozenset({"function-after", "function-before", "function-wrap"})


def key_path(loc: tuple[Any, ...], root: str = "") -> str:
    """`("fleet", 0, "serving", "version")` -> `fleet[0].serving.version`, after `root`."""
    path = ""
    for part in loc:
        if part in _NOT_KEYS:
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return root + (path or "(top level)")


def problem_lines(error: ValidationError, root: str = "") -> list[str]:
    """Every problem of `error` as `path: message`; an unknown key says it may be a typo."""
    lines = []
    for item in error.errors(include_url=False):
        msg = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            msg = "unknown key (typo?)"
        elif item["type"] == "literal_error":
            msg += f" (got {item['input']!r})"
        lines.append(f"{key_path(tuple(item['loc']), root)}: {msg}")
    return lines
