"""Which spoke a resource of the fleet stack belongs to, and what to call it.

Every object of a spoke is named `<spoke>:<namespace>/<name>` or `<spoke>:<name>`
(aggregated role guards too: `<spoke>:<role>`); the spoke's component and its
Kubernetes provider are named `<spoke>`. Everything else (the fleet membership, the
wave gates `wave-<name>`, the stack) belongs to the fleet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.resource_types import PROVIDER_TYPE, SPOKE_TYPE

NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"


@dataclass(frozen=True)
class Resource:
    urn: str
    type: str
    spoke: str | None  # None: a fleet-level resource
    name: str  # without the spoke: `knative-serving/config-network`, `spoke-2` itself

    @property
    def kind(self) -> str:
        """`ConfigMap` for kubernetes:core/v1:ConfigMap, `FleetMembership` for the
        dynamic resource, `Provider` for a provider."""
        if self.type.startswith("pulumi:providers:"):
            return "Provider"
        return self.type.rpartition(":")[2]

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}"


def urn_name(urn: str) -> str:
    """The resource name: what follows the urn's type (`urn:pulumi:stack::project::
    type::name`)."""
    parts = urn.split("::", 3)
    return parts[3] if len(parts) == 4 else urn


def urn_type(urn: str) -> str:
    """The resource's own type: the last of the urn's `parent$child` types."""
    parts = urn.split("::", 3)
    return parts[2].rpartition("$")[2] if len(parts) == 4 else ""


def resource(step: Mapping[str, Any]) -> Resource:
    urn = str(step.get("urn", ""))
    state = step.get("newState") or step.get("oldState") or {}
    type_ = str(state.get("type") or urn_type(urn))
    name = urn_name(urn)
    if type_ in (SPOKE_TYPE, PROVIDER_TYPE) and not name.startswith("default"):
        return Resource(urn, type_, name, name)
    spoke, sep, rest = name.partition(":")
    if sep and spoke and rest:
        return Resource(urn, type_, spoke, rest)
    return Resource(urn, type_, None, name)
