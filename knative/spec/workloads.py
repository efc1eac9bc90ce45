"""spec.workloads: the operator's OverridesTransform (pkg/reconciler/common/workload_override.go).

Per named Deployment, StatefulSet, DaemonSet or Job of the release: replicas, labels,
annotations, scheduling fields, resources, env (env_override.go) and probe timings
(probe_override.go). Unlike the operator, which skips what it cannot match, a name the
release does not have is a `TransformError` that lists the known names: a typo must not
silently leave a spoke unconfigured. The operator's deprecated `deployments` takes the
same entries and is applied the same way, before `workloads`.

`replicas` of an HPA-scaled workload raises its HPA's floor (the operator's hpaTransform,
never lowering it) instead of the workload's replicas. The HPA is the one whose
scaleTargetRef names the workload; for the release HPAs that is the HPA the operator's
getHPAName (hpa.go) names (`mt-broker-ingress` -> `broker-ingress-hpa`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from core.errors import TransformError
from core.strict import Strict
from knative.manifests import CR_NAME_LABEL, Rendered
from knative.objects import (
    MANAGED_BY_LABEL,
    not_in_release,
    of_kind,
    pod_spec,
    upsert_by_name,
    workload_matches,
)
from knative.spec.high_availability import (
    CUSTOM_AUTOSCALED,
    REPLICATED_KINDS,
    hpa_by_target,
    raise_hpa_floor,
)

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

OVERRIDABLE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
# Labels render sets for ownership and discovery; an override must not move them.
RESERVED_LABELS = frozenset({MANAGED_BY_LABEL, CR_NAME_LABEL})

_QUANTITY = re.compile(
    r"^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


# ---------------------------------------------------------------------------- models


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


# ---------------------------------------------------------------------------- helpers


def _containers(spec: dict) -> dict[str, dict]:
    return {c["name"]: c for c in spec.get("containers") or []}


def _per_container(items: Sequence[Any], spec: dict, obj: dict, field: str,
                   apply: Callable[[dict, Any], None], key: str) -> None:
    containers = _containers(spec)
    for item in items:
        container = containers.get(item.container)
        if container is None:
            raise TransformError(
                f"{key} {obj['metadata']['name']!r} {field} names container "
                f"{item.container!r}, which this {obj['kind']} does not have; known: "
                f"{', '.join(sorted(containers))}")
        apply(container, item)


def _merge_resources(container: dict, item: ResourceOverride) -> None:
    resources = container.setdefault("resources", {})
    for field, values in (("requests", item.requests), ("limits", item.limits)):
        if values:
            resources[field] = {**(resources.get(field) or {}), **values}


def _merge_env(container: dict, item: EnvOverride) -> None:
    for var in item.env_vars:
        upsert_by_name(container, "env", var.model_dump(by_alias=True, exclude_none=True))


def _probe_merger(field: str, workload: str,
                  key: str) -> Callable[[dict, ProbeOverride], None]:
    def merge(container: dict, item: ProbeOverride) -> None:
        fields = item.fields()
        if not fields:
            container.pop(field, None)  # the operator's "explicitly empty disables"
            return
        probe = container.get(field)
        if probe is None:
            # The operator would add a probe without a handler, which Kubernetes rejects.
            raise TransformError(
                f"{key} {workload!r} {field}s: container {item.container!r} has no "
                f"{field} to tune; the release defines none")
        probe.update(fields)
    return merge


def _check_selector_labels(obj: dict, labels: Mapping[str, str], key: str) -> None:
    """Pod labels that a selector matches on must keep their values, or the workload
    would no longer select its own pods (Kubernetes rejects it)."""
    selector = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    for label, value in labels.items():
        if label in selector and selector[label] != value:
            raise TransformError(
                f"{key} {obj['metadata']['name']!r} labels sets {label}={value!r}, but the "
                f"{obj['kind']}'s selector needs {label}={selector[label]!r}; "
                f"use another label key")


def _template_metadata(obj: dict) -> dict:
    spec = obj.setdefault("spec", {})
    if obj["kind"] == "CronJob":
        spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    return spec.setdefault("template", {}).setdefault("metadata", {})


def _override_one(obj: dict, override: WorkloadOverride, hpas: Mapping[str, list[dict]],
                  key: str) -> None:
    """One entry of `key` (`workloads` or `deployments`, named in errors) on one object."""
    name, kind = obj["metadata"]["name"], obj["kind"]
    spec = pod_spec(obj)
    if spec is None:
        raise TransformError(f"{key} {name!r}: the release {kind} has no pod template")
    if override.replicas is not None:
        if kind not in REPLICATED_KINDS:
            raise TransformError(
                f"{key} {override.name!r} sets replicas, but {name!r} is a {kind}, which "
                f"has none; remove replicas")
        if name in CUSTOM_AUTOSCALED:
            raise TransformError(
                f"{key} {name!r} sets replicas, but its autoscaler scales it; remove "
                f"replicas")
        if name in hpas and override.replicas == 0:
            raise TransformError(
                f"{key} {name!r} sets replicas 0, but an HPA scales it and HPAs cannot "
                f"go below 1 replica; use replicas >= 1")
        if name in hpas:
            # The operator leaves an autoscaled workload's replicas to its HPA and raises
            # the HPA's floor instead (never lowers it: a floor high-availability set on
            # an HPA named unlike its workload stays).
            for hpa in hpas[name]:
                raise_hpa_floor(hpa, override.replicas)
        else:
            obj["spec"]["replicas"] = override.replicas

    if override.labels:
        _check_selector_labels(obj, override.labels, key)
    meta = obj["metadata"]
    template_meta = _template_metadata(obj)
    for field, values in (("labels", override.labels), ("annotations", override.annotations)):
        if values:
            # The operator puts both on the workload and on its pod template.
            meta[field] = {**(meta.get(field) or {}), **values}
            template_meta[field] = {**(template_meta.get(field) or {}), **values}

    if override.node_selector:
        spec["nodeSelector"] = dict(override.node_selector)
    if override.tolerations:
        spec["tolerations"] = [t.model_dump(by_alias=True, exclude_none=True)
                               for t in override.tolerations]
    if override.affinity is not None:
        spec["affinity"] = override.affinity.model_dump(by_alias=True, exclude_none=True)
    if override.topology_spread_constraints:
        spec["topologySpreadConstraints"] = [
            t.model_dump(by_alias=True, exclude_none=True)
            for t in override.topology_spread_constraints]
    if override.host_network is not None:
        spec["hostNetwork"] = override.host_network
        if override.host_network:
            # Without it, host-network pods cannot resolve cluster Service names.
            spec["dnsPolicy"] = "ClusterFirstWithHostNet"

    _per_container(override.resources, spec, obj, "resources", _merge_resources, key)
    _per_container(override.env, spec, obj, "env", _merge_env, key)
    _per_container(override.readiness_probes, spec, obj, "readinessProbes",
                   _probe_merger("readinessProbe", name, key), key)
    _per_container(override.liveness_probes, spec, obj, "livenessProbes",
                   _probe_merger("livenessProbe", name, key), key)


# ---------------------------------------------------------------------------- transform


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """`workloads` (the operator's, and its deprecated `deployments`): per named
    Deployment/StatefulSet/DaemonSet/Job, replicas (for an HPA-scaled workload: the HPA's
    minReplicas), labels and annotations (workload and pod template; selector
    labels keep their values), nodeSelector, tolerations, affinity,
    topologySpreadConstraints and hostNetwork (replaced), resources and env (merged per
    container), and probe timings (merged per container).

    As the operator's GetWorkloadOverrides (pkg/apis/operator/base/common.go), the
    `deployments` entries apply first and the `workloads` entries after them, so on a
    field both set `workloads` wins."""
    overrides = [*(("deployments", o) for o in spec.deployments),
                 *(("workloads", o) for o in spec.workloads)]
    if not overrides:
        return rendered
    workloads = of_kind(rendered, *OVERRIDABLE_KINDS)
    hpas = hpa_by_target(rendered)
    for key, override in overrides:
        matched = [o for o in workloads
                   if workload_matches(override.name, o["metadata"]["name"], o["kind"])]
        if not matched:
            raise not_in_release(
                key, override.name, (o["metadata"]["name"] for o in workloads),
                hint=" (a Job may also be named by its generateName, ending in '-')")
        for obj in matched:
            _override_one(obj, override, hpas, key)
    return rendered
