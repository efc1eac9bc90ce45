"""The fleet stack's configuration: every input the user writes, validated once.

Stack config keys (namespace `knative-fleet`): `hub`, `providerFile`,
`releaseBase`, `pluginTimeoutSeconds`, `ring` (the stack's rollout ring, for the fleet
runner), `spokeIdentity` (who the access provider's credentials are for, config.identity),
`fleet` (spokes by name), `groups` (spokes by ClusterProfile labels,
config.groups) and `rollout` (waves, config.rollout); each
entry's and group's `serving` and `eventing` are the Knative specs of
models.component. All problems are reported
in one error, each with its config path, before any resource is registered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from config.groups import FleetGroup
from config.identity import DEFAULT_SPOKE_IDENTITY, SpokeIdentity, subject_of
from config.rollout import Rollout
from core.errors import FleetConfigError
from core.problems import problem_lines
from core.strict import Strict, dns_label_name, repeated_names
from models.component import EventingSpec, ServingSpec

CONFIG_NAMESPACE = "knative-fleet"


SpokeName = dns_label_name("spoke name")

# The stack's rollout ring: the fleet runner (`python -m runner`) changes every stack of
# ring 1, then of ring 2 once all of ring 1 succeeded, and so on. Strict: `true` or
# `1.0` is a typo, not ring 1. The runner reads the same key from the stack file.
Ring = Annotated[int, Field(ge=1, strict=True)]
DEFAULT_RING = 1


class HubConfig(Strict):
    kubeconfig: str | None = None
    context: str | None = None


class ClusterProfileRef(Strict):
    name: Annotated[str, Field(min_length=1)]
    namespace: Annotated[str, Field(min_length=1)]


class FleetEntry(Strict):
    name: SpokeName
    cluster_profile_ref: ClusterProfileRef = Field(alias="clusterProfileRef")
    serving: ServingSpec | None = None
    eventing: EventingSpec | None = None
    # Who this spoke's credentials are for, when not the stack's `spokeIdentity`.
    spoke_identity: SpokeIdentity | None = Field(None, alias="spokeIdentity")


class FleetConfig(Strict):
    hub: HubConfig = Field(default_factory=HubConfig)
    provider_file: str | None = Field(None, alias="providerFile")
    release_base: str = Field("https://github.com", alias="releaseBase")
    plugin_timeout_seconds: float = Field(30.0, alias="pluginTimeoutSeconds", gt=0, le=600)
    ring: Ring = DEFAULT_RING
    spoke_identity: SpokeIdentity = Field(DEFAULT_SPOKE_IDENTITY, alias="spokeIdentity")
    fleet: list[FleetEntry] = []
    groups: list[FleetGroup] = []
    rollout: Rollout | None = None

    def identity_of(self, spec: FleetEntry | FleetGroup) -> str:
        """Who an entry's or a group's spokes' credentials are for: its own
        `spokeIdentity`, else the stack's."""
        return spec.spoke_identity or self.spoke_identity

    def subject_of(self, spec: FleetEntry | FleetGroup) -> dict[str, str]:
        """identity_of as an RBAC subject (config.identity)."""
        return subject_of(self.identity_of(spec))

    @field_validator("release_base")
    @classmethod
    def release_base_url(cls, value: str) -> str:
        if value.startswith("file://"):
            path = Path(value.removeprefix("file://"))
            return "file://" + str(path.resolve())
        if not value.startswith(("https://", "http://")):
            raise ValueError(
                f"releaseBase must be an https://, http:// or file:// URL, got {value!r}")
        return value.rstrip("/")

    @model_validator(mode="after")
    def unique_entries(self) -> FleetConfig:
        problems = repeated_names((e.name for e in self.fleet), "fleet")
        seen_refs: dict[tuple[str, str], str] = {}
        for i, entry in enumerate(self.fleet):
            ref = (entry.cluster_profile_ref.namespace, entry.cluster_profile_ref.name)
            if ref in seen_refs and seen_refs[ref] != entry.name:
                problems.append(
                    f"fleet[{i}].clusterProfileRef: ClusterProfile {ref[0]}/{ref[1]} is already "
                    f"the target of spoke {seen_refs[ref]!r}; one entry per ClusterProfile")
            seen_refs.setdefault(ref, entry.name)
        problems += repeated_names((g.name for g in self.groups), "groups")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def parse_fleet_config(raw: dict[str, Any]) -> FleetConfig:
    """Validates the raw stack config; raises FleetConfigError listing every problem."""
    try:
        return FleetConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [f"  {line}" for line in problem_lines(exc, CONFIG_NAMESPACE + ":")]
        raise FleetConfigError(
            "the fleet configuration is invalid:\n" + "\n".join(lines)
            + "\nFix these keys in the stack config (stacks/Pulumi.<stack>.yaml); see "
            "docs/configuration.md.") from None
