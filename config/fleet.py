"""The fleet stack's configuration: every input the user writes, validated once.

Stack config keys (namespace `knative-fleet`): `hub`, `providerFile`,
`releaseBase`, `pluginTimeoutSeconds` and `fleet`. All problems are reported in
one error, each with its config path, before any resource is registered.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core.errors import FleetConfigError
from core.problems import problem_lines
from core.strict import DNS_LABEL, Strict
from knative.spec.eventing import EventingOptions
from knative.spec.ingress import ControllerCustomCerts, Ingress
from knative.spec.registry import Registry
from knative.spec.workloads import (
    HighAvailability,
    PodDisruptionBudgetOverride,
    ServiceOverride,
    WorkloadOverride,
)

CONFIG_NAMESPACE = "knative-fleet"
VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


class HubConfig(Strict):
    kubeconfig: str | None = None
    context: str | None = None


class ClusterProfileRef(Strict):
    name: Annotated[str, Field(min_length=1)]
    namespace: Annotated[str, Field(min_length=1)]


class NamespaceConfiguration(Strict):
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


class ManifestUrl(Strict):
    """The operator's `{URL: ...}` manifest entry."""

    url: Annotated[str, Field(min_length=1, alias="URL")]


def _manifest_location(value: str | ManifestUrl) -> str:
    """A release file as a URL: http(s):// and file:// as given, anything else a path
    relative to the Pulumi project. `${VERSION}` is substituted at plan time."""
    text = value.url if isinstance(value, ManifestUrl) else value
    if "://" in text:
        if not text.startswith(("https://", "http://", "file://")):
            raise ValueError(f"manifest {text!r}: use an https://, http:// or file:// URL, "
                             "or a file path")
        return text
    return "file://" + str(Path(text).resolve())


ManifestSource = Annotated[str | ManifestUrl, Field(union_mode="left_to_right")]


class ComponentSpec(Strict):
    version: str = "1.23"
    namespace_configuration: NamespaceConfiguration = Field(
        default_factory=NamespaceConfiguration, alias="namespaceConfiguration")
    delete_crds_on_destroy: bool = Field(False, alias="deleteCrdsOnDestroy")
    allow_minor_skip: bool = Field(False, alias="allowMinorSkip")
    config: dict[str, dict[str, str]] = {}
    # Overwrite mode: exactly these files (ingress and sources included) instead of the
    # release's. Append mode: these after the release; same identity replaces.
    manifests: list[ManifestSource] | None = None
    additional_manifests: list[ManifestSource] = Field([], alias="additionalManifests")
    registry: Registry | None = None
    high_availability: HighAvailability | None = Field(None, alias="high-availability")
    workloads: list[WorkloadOverride] = []
    services: list[ServiceOverride] = []
    pod_disruption_budgets: list[PodDisruptionBudgetOverride] = Field(
        [], alias="podDisruptionBudgets")

    @field_validator("version")
    @classmethod
    def version_shape(cls, value: str) -> str:
        if not VERSION.match(value):
            raise ValueError(f'version must look like "1.23" or "1.23.0", got {value!r}')
        return value

    @field_validator("manifests", "additional_manifests")
    @classmethod
    def manifest_locations(cls, value: list | None) -> list[str] | None:
        if value is None:
            return None
        return [_manifest_location(v) for v in value]

    @field_validator("manifests")
    @classmethod
    def manifests_not_empty(cls, value: list | None) -> list | None:
        if value is not None and not value:
            raise ValueError("manifests must name at least one file; leave it out to "
                             "install the release files")
        return value


class ServingSpec(ComponentSpec):
    ingress: Ingress = Field(default_factory=Ingress)
    controller_custom_certs: ControllerCustomCerts | None = Field(
        None, alias="controller-custom-certs")


class EventingSpec(ComponentSpec, EventingOptions):
    pass


class FleetEntry(Strict):
    name: str
    cluster_profile_ref: ClusterProfileRef = Field(alias="clusterProfileRef")
    serving: ServingSpec | None = None
    eventing: EventingSpec | None = None

    @field_validator("name")
    @classmethod
    def dns_label(cls, value: str) -> str:
        if not DNS_LABEL.match(value):
            raise ValueError(f"spoke name must be a DNS-1123 label (a-z, 0-9, -), got {value!r}")
        return value


class FleetConfig(Strict):
    hub: HubConfig = Field(default_factory=HubConfig)
    provider_file: str | None = Field(None, alias="providerFile")
    release_base: str = Field("https://github.com", alias="releaseBase")
    plugin_timeout_seconds: float = Field(30.0, alias="pluginTimeoutSeconds", gt=0, le=600)
    fleet: list[FleetEntry] = []

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
        problems = []
        seen_names: dict[str, int] = {}
        seen_refs: dict[tuple[str, str], str] = {}
        for i, entry in enumerate(self.fleet):
            if entry.name in seen_names:
                problems.append(f"fleet[{i}].name: {entry.name!r} is already used by "
                                f"fleet[{seen_names[entry.name]}]")
            seen_names.setdefault(entry.name, i)
            ref = (entry.cluster_profile_ref.namespace, entry.cluster_profile_ref.name)
            if ref in seen_refs and seen_refs[ref] != entry.name:
                problems.append(
                    f"fleet[{i}].clusterProfileRef: ClusterProfile {ref[0]}/{ref[1]} is already "
                    f"the target of spoke {seen_refs[ref]!r}; one entry per ClusterProfile")
            seen_refs.setdefault(ref, entry.name)
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
            + "\nFix these keys in the stack config (stacks/Pulumi.<stack>.yaml); see README "
            "'Configuration reference'.") from None
