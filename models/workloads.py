"""spec.workloads (and the operator's deprecated `deployments`, which takes the same
entries): the models of the operator's OverridesTransform
(pkg/reconciler/common/workload_override.go); knative.transforms.workloads applies them.

Per named Deployment, StatefulSet, DaemonSet or Job of the release: replicas, labels,
annotations, scheduling fields, resources, env (env_override.go) and probe timings
(probe_override.go).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from core.names import CR_NAME_LABEL, MANAGED_BY_LABEL
from core.strict import Strict

# Labels render sets for ownership and discovery; an override must not move them.
RESERVED_LABELS = frozenset({MANAGED_BY_LABEL, CR_NAME_LABEL})

_QUANTITY = re.compile(
    r"^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


class ResourceOverride(Strict):
    """`workloads[].resources[]`: requests/limits merged key by key into one container."""

    container: str = Field(min_length=1)
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}

    @field_validator("requests", "limits", mode="before")
    @classmethod
    def quantities(cls, value: Any) -> Any:
        # Quantities may be written as YAML numbers (cpu: 1); Kubernetes wants strings.
        if isinstance(value, Mapping):
            value = {k: str(v) if isinstance(v, int | float) and not isinstance(v, bool)
                     else v for k, v in value.items()}
            for key, quantity in value.items():
                if isinstance(quantity, str) and not _QUANTITY.match(quantity):
                    raise ValueError(
                        f"{key}: {quantity!r} is not a Kubernetes quantity "
                        f"(e.g. 100m, 0.5, 128Mi, 1Gi)")
        return value


class EnvVar(Strict):
    """One env var, as in a container spec (`value` or `valueFrom`)."""

    name: str = Field(min_length=1)
    value: str | None = None
    value_from: dict[str, Any] | None = Field(None, alias="valueFrom")

    @model_validator(mode="after")
    def value_xor_value_from(self) -> EnvVar:
        if self.value is not None and self.value_from is not None:
            raise ValueError(f"env var {self.name!r}: give value or valueFrom, not both")
        return self


class EnvOverride(Strict):
    """`workloads[].env[]`: env vars replaced by name, or added, in one container."""

    container: str = Field(min_length=1)
    env_vars: list[EnvVar] = Field(alias="envVars", min_length=1)


class ProbeOverride(Strict):
    """`workloads[].readinessProbes[]` / `livenessProbes[]`: timing fields merged into
    the container's probe; no field at all removes the probe (operator behaviour)."""

    container: str = Field(min_length=1)
    initial_delay_seconds: int | None = Field(None, alias="initialDelaySeconds", ge=0)
    timeout_seconds: int | None = Field(None, alias="timeoutSeconds", ge=1)
    period_seconds: int | None = Field(None, alias="periodSeconds", ge=1)
    success_threshold: int | None = Field(None, alias="successThreshold", ge=1)
    failure_threshold: int | None = Field(None, alias="failureThreshold", ge=1)
    termination_grace_period_seconds: int | None = Field(
        None, alias="terminationGracePeriodSeconds", ge=1)

    def fields(self) -> dict[str, int]:
        """The probe fields the user set, in Kubernetes spelling."""
        return self.model_dump(by_alias=True, exclude_none=True, exclude={"container"})


class Toleration(Strict):
    """A pod toleration, Kubernetes spelling."""

    key: str | None = None
    operator: Literal["Exists", "Equal"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = Field(None, alias="tolerationSeconds")

    @model_validator(mode="after")
    def key_or_exists(self) -> Toleration:
        # Kubernetes: an empty key matches every taint only with operator Exists.
        if not self.key and self.operator != "Exists":
            raise ValueError("a toleration without key needs operator: Exists")
        if self.operator == "Exists" and self.value:
            raise ValueError("a toleration with operator Exists takes no value")
        return self


class Affinity(Strict):
    """A pod affinity; the three parts are passed to Kubernetes as written."""

    node_affinity: dict[str, Any] | None = Field(None, alias="nodeAffinity")
    pod_affinity: dict[str, Any] | None = Field(None, alias="podAffinity")
    pod_anti_affinity: dict[str, Any] | None = Field(None, alias="podAntiAffinity")


class TopologySpreadConstraint(Strict):
    """A pod topology spread constraint, Kubernetes spelling."""

    max_skew: int = Field(alias="maxSkew", ge=1)
    topology_key: str = Field(alias="topologyKey", min_length=1)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = Field(
        alias="whenUnsatisfiable")
    label_selector: dict[str, Any] | None = Field(None, alias="labelSelector")
    min_domains: int | None = Field(None, alias="minDomains", ge=1)
    node_affinity_policy: Literal["Honor", "Ignore"] | None = Field(
        None, alias="nodeAffinityPolicy")
    node_taints_policy: Literal["Honor", "Ignore"] | None = Field(
        None, alias="nodeTaintsPolicy")
    match_label_keys: list[str] | None = Field(None, alias="matchLabelKeys")


class WorkloadOverride(Strict):
    """`workloads[]`: one Deployment, StatefulSet, DaemonSet or Job of the release, by
    name (a Job also by its release generateName, e.g. `storage-version-migration-serving-`)."""

    name: str = Field(min_length=1)
    replicas: StrictInt | None = Field(None, ge=0)
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    resources: list[ResourceOverride] = []
    env: list[EnvOverride] = []
    node_selector: dict[str, str] = Field({}, alias="nodeSelector")
    tolerations: list[Toleration] = []
    affinity: Affinity | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] = Field(
        [], alias="topologySpreadConstraints")
    readiness_probes: list[ProbeOverride] = Field([], alias="readinessProbes")
    liveness_probes: list[ProbeOverride] = Field([], alias="livenessProbes")
    host_network: bool | None = Field(None, alias="hostNetwork")

    @field_validator("labels")
    @classmethod
    def no_reserved_labels(cls, value: dict[str, str]) -> dict[str, str]:
        return refuse_reserved_labels(value)


def refuse_reserved_labels(value: dict[str, str]) -> dict[str, str]:
    """The labels, unless they name one that render sets (ownership and discovery)."""
    reserved = sorted(RESERVED_LABELS & set(value))
    if reserved:
        raise ValueError(f"labels {', '.join(reserved)} are set by knative-fleet and "
                         f"cannot be overridden")
    return value

