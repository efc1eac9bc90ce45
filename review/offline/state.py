"""The stack's last state (`pulumi stack export`) as the offline review reads it: every
resource by URN, the stack's own URN parts and its `spokes` output.

The export needs only the backend, not the clusters. Exported without
`--show-secrets`, a secret value is an envelope holding ciphertext: it cannot be
compared, and the review says so; exported with it, the envelope holds the plaintext.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.resource_types import SPOKE_TYPE, STACK_TYPE
from review.resources import urn_name

# Pulumi's marker of a secret value in a checkpoint.
SECRET_SIG = "4dabf18193072939515e22adb298388d"


class Hidden:
    """A secret value the export holds only as ciphertext: equal to any value."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "[secret]"


HIDDEN = Hidden()


def reveal(value: Any) -> Any:
    """The value with every secret envelope opened: its plaintext when the export has
    it, else HIDDEN."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            if "plaintext" in value:
                try:
                    return reveal(json.loads(value["plaintext"]))
                except (TypeError, ValueError):
                    return value["plaintext"]
            return HIDDEN
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    return value


def has_hidden(value: Any) -> bool:
    if value is HIDDEN:
        return True
    if isinstance(value, dict):
        return any(has_hidden(v) for v in value.values())
    if isinstance(value, list):
        return any(has_hidden(v) for v in value)
    return False


@dataclass
class LastState:
    """One stack's checkpoint: resources by URN, in the order the state lists them."""

    resources: dict[str, dict[str, Any]]
    stack_urn: str | None
    taken_at: str | None = None
    hidden_secrets: bool = False
    _children: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_export(cls, export: Mapping[str, Any]) -> LastState:
        """From `pulumi stack export`'s document (an empty or new stack has none)."""
        deployment = export.get("deployment") or {}
        resources: dict[str, dict[str, Any]] = {}
        hidden = False
        for res in deployment.get("resources") or []:
            if res.get("delete"):  # a replacement's old copy waiting for deletion
                continue
            res = {**res, "inputs": reveal(res.get("inputs") or {}),
                   "outputs": reveal(res.get("outputs") or {})}
            hidden |= has_hidden(res["inputs"])
            resources[res["urn"]] = res
        stack = next((u for u, r in resources.items() if r.get("type") == STACK_TYPE), None)
        taken = (deployment.get("manifest") or {}).get("time")
        state = cls(resources, stack, taken, hidden)
        for res in resources.values():
            if res.get("parent"):
                state._children.setdefault(res["parent"], []).append(res)
        return state

    @classmethod
    def load(cls, path: str | Path) -> LastState:
        raw = Path(path).read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return cls.from_export(json.loads(raw.decode("utf-8")) if raw.strip() else {})

    @property
    def stack_resource(self) -> dict[str, Any] | None:
        return self.resources.get(self.stack_urn) if self.stack_urn else None

    @property
    def spokes_output(self) -> dict[str, dict[str, Any]]:
        """The last run's `spokes` stack output: versions, server, kubernetesVersion."""
        outputs = (self.stack_resource or {}).get("outputs") or {}
        spokes = outputs.get("spokes")
        return dict(spokes) if isinstance(spokes, dict) else {}

    def spoke_urn(self, spoke: str) -> str | None:
        """The URN of spoke's `Spoke` component, if the state has it."""
        return next((u for u, r in self.resources.items()
                     if r.get("type") == SPOKE_TYPE and urn_name(u) == spoke), None)

    def children(self, urn: str | None) -> list[dict[str, Any]]:
        return list(self._children.get(urn, [])) if urn else []

    def spoke_objects(self, spoke: str) -> list[dict[str, Any]]:
        """Every resource under spoke's component (its objects, provider, guards)."""
        return self.children(self.spoke_urn(spoke))
