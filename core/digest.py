"""One digest of plain data and the plan's dataclasses: the same value gives the same
digest in every process (keys sorted, dataclasses by their fields, enums by value,
sets sorted, errors by their text)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Set
from enum import Enum
from typing import Any


def _encoder(leave_out: Set[str]) -> Any:
    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                    if f.name not in leave_out}
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, (set, frozenset)):
            return sorted(value, key=str)
        if isinstance(value, Exception):
            return {"error": str(value)}
        raise TypeError(f"cannot digest {type(value).__name__}")
    return plain


def digest(value: Any, leave_out: Set[str] = frozenset()) -> str:
    """`sha256:<hex>` of the value; dataclass fields named in `leave_out` are not part
    of it."""
    text = json.dumps(value, default=_encoder(leave_out), sort_keys=True,
                      separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
