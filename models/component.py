"""The spec of a KnativeServing / KnativeEventing as one fleet entry writes it: the
operator's CommonSpec (pkg/apis/operator/base/common.go) and the v1beta1
KnativeServingSpec / KnativeEventingSpec, each key's model from the module of models/
named after the key."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from core.strict import Strict
from models.config import ConfigData
from models.controller_custom_certs import ControllerCustomCerts
from models.default_broker_class import BrokerClass
from models.high_availability import HighAvailability
from models.ingress import Ingress
from models.manifests import ManifestList, Manifests
from models.namespace import NamespaceConfiguration
from models.pod_disruption_budgets import PodDisruptionBudgetOverride
from models.registry import Registry
from models.services import ServiceOverride
from models.sink_binding_selection_mode import SinkBindingSelectionMode
from models.source import EventingSources
from models.version import Version
from models.workloads import WorkloadOverride


class ComponentSpec(Strict):
    """The keys Serving and Eventing share."""

    version: Version = "1.23"
    # The operator's key is `namespace` (Go field NamespaceConfiguration, JSON name
    # "namespace"); `namespaceConfiguration` is what stacks written before said, kept
    # working as a deprecated spelling. Read both through namespace_settings().
    namespace_configuration: NamespaceConfiguration | None = Field(None, alias="namespace")
    deprecated_namespace_configuration: NamespaceConfiguration | None = Field(
        None, alias="namespaceConfiguration")
    delete_crds_on_destroy: bool = Field(False, alias="deleteCrdsOnDestroy")
    allow_minor_skip: bool = Field(False, alias="allowMinorSkip")
    config: ConfigData = {}
    # Overwrite mode: exactly these files (ingress and sources included) instead of the
    # release's. Append mode: these after the release; same identity replaces.
    manifests: Manifests | None = None
    additional_manifests: ManifestList = Field([], alias="additionalManifests")
    registry: Registry | None = None
    high_availability: HighAvailability | None = Field(None, alias="high-availability")
    workloads: list[WorkloadOverride] = []
    # The operator's deprecated `deployments` (Go field DeploymentOverride): the same
    # entries as `workloads`, applied before them. Read both through workload_overrides().
    deployments: list[WorkloadOverride] = []
    services: list[ServiceOverride] = []
    pod_disruption_budgets: list[PodDisruptionBudgetOverride] = Field(
        [], alias="podDisruptionBudgets")

    @field_validator("deprecated_namespace_configuration")
    @classmethod
    def not_both_namespace_spellings(
            cls, value: NamespaceConfiguration | None,
            info: ValidationInfo) -> NamespaceConfiguration | None:
        # Two places for the same labels: which one wins would be a guess.
        if value is not None and info.data.get("namespace_configuration") is not None:
            raise ValueError(
                "`namespace` is given as well; `namespaceConfiguration` is the deprecated "
                "spelling of the operator's `namespace`: move its labels and annotations "
                "under `namespace` and remove `namespaceConfiguration`")
        return value

    def namespace_settings(self) -> NamespaceConfiguration:
        """The install namespace's labels and annotations, from `namespace` or its
        deprecated spelling `namespaceConfiguration` (never both)."""
        return (self.namespace_configuration or self.deprecated_namespace_configuration
                or NamespaceConfiguration())

    def workload_overrides(self) -> list[WorkloadOverride]:
        """The operator's GetWorkloadOverrides (pkg/apis/operator/base/common.go): the
        deprecated `deployments` entries, then the `workloads` entries, in the order
        they are applied (a later entry wins on a field both set)."""
        return [*self.deployments, *self.workloads]


class ServingSpec(ComponentSpec):
    """KnativeServing's spec: the shared keys, `ingress` and `controller-custom-certs`."""

    ingress: Ingress = Field(default_factory=Ingress)
    controller_custom_certs: ControllerCustomCerts | None = Field(
        None, alias="controller-custom-certs")


class EventingKeys(Strict):
    """The keys only KnativeEventing's spec has. A base of EventingSpec rather than its
    own fields so that they stay first in field order, which is the order validation
    problems are reported in."""

    default_broker_class: BrokerClass | None = Field(None, alias="defaultBrokerClass")
    sink_binding_selection_mode: SinkBindingSelectionMode | None = Field(
        None, alias="sinkBindingSelectionMode")
    source: EventingSources = Field(default_factory=EventingSources)


class EventingSpec(ComponentSpec, EventingKeys):
    """KnativeEventing's spec: the shared keys, `defaultBrokerClass`,
    `sinkBindingSelectionMode` and `source`."""
