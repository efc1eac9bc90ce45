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

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.errors import TransformError
from knative.objects import (
    Rendered,
    not_in_release,
    of_kind,
    pod_spec,
    upsert_by_name,
    workload_matches,
)
from knative.transforms.high_availability import (
    CUSTOM_AUTOSCALED,
    REPLICATED_KINDS,
    hpa_by_target,
    raise_hpa_floor,
)
from models.component import ComponentSpec
from models.workloads import EnvOverride, ProbeOverride, ResourceOverride, WorkloadOverride

OVERRIDABLE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


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
