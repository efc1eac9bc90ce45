"""The Knative versions a spoke runs before and after a preview, and what kind of
step lies between them.

An object's version is its `app.kubernetes.io/version` label and its product is its
`app.kubernetes.io/name` label (`knative-serving`, `knative-eventing`); objects of
other products (Kourier) carry their own versions and are not counted.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.names import VERSION_LABEL
from knative.objects import dig

NAME_LABEL = "app.kubernetes.io/name"
COMPONENTS = ("serving", "eventing")
PRODUCTS = {"knative-serving": "serving", "knative-eventing": "eventing"}
_SEMVER = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class VersionChange:
    before: str | None  # None: not installed
    after: str | None  # None: not installed (removed, or never there)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def step(self) -> str | None:
        """What a reviewer should know about the step, None when nothing changes."""
        if not self.changed:
            return None
        if self.before is None:
            return "install"
        if self.after is None:
            return "uninstall"
        old, new = parse(self.before), parse(self.after)
        if old is None or new is None:
            return "change"
        if new < old:
            return "downgrade"
        if new[0] == old[0] and new[1] > old[1] + 1:
            return "skips a minor version (Knative upgrades one minor at a time)"
        if new[:2] == old[:2]:
            return "patch"
        return "upgrade"


def parse(version: str) -> tuple[int, int, int] | None:
    m = _SEMVER.fullmatch(version)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def component_of(state: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(component, version) of one object's state, None for objects of no component."""
    labels = dig(state, ["inputs", "metadata", "labels"]) or {}
    component = PRODUCTS.get(labels.get(NAME_LABEL, ""))
    version = labels.get(VERSION_LABEL)
    if component is None or not isinstance(version, str):
        return None
    return component, version


def commonest(versions: Iterable[str]) -> str | None:
    """The version most objects carry (an interrupted upgrade leaves a mix)."""
    counted = Counter(versions).most_common()
    return min(counted, key=lambda kv: (-kv[1], kv[0]))[0] if counted else None
