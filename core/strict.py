"""The base every model of user-written input shares, and the names it checks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

# A Kubernetes object name that must be a DNS-1123 label (RFC 1123): spoke names,
# Service and Secret names the spec refers to.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class Strict(BaseModel):
    """Unknown keys are typos until proven otherwise: refuse them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def dns_label_name(what: str) -> Any:
    """A `str` field that must be a DNS-1123 label; the error names what it is."""
    def check(value: str) -> str:
        if not DNS_LABEL.match(value):
            raise ValueError(f"{what} must be a DNS-1123 label (a-z, 0-9, -), got {value!r}")
        return value
    return Annotated[str, AfterValidator(check)]


def repeated_names(names: Iterable[str], path: str) -> list[str]:
    """`path[i].name: 'x' is already used by path[j]` for every name given twice."""
    problems = []
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            problems.append(f"{path}[{i}].name: {name!r} is already used by {path}[{first[name]}]")
        first.setdefault(name, i)
    return problems
