"""spec.high-availability: the operator's HighAvailabilityTransform (pkg/reconciler/common/ha.go).

`replicas` for every control-plane Deployment that no autoscaler scales (the operator's
hpa.go says which are), and the floor of the release's HPAs (hpa.go hpaTransform, which
`workloads` uses too: it only ever raises minReplicas).

Like the operator, an object is left to `workloads` when a `workloads` entry with
`replicas` carries the object's own name: that Deployment, and an HPA named like it
(`activator`). An HPA named otherwise (Eventing's `broker-ingress-hpa` for
`mt-broker-ingress`) still gets the HA floor here, and the entry's replicas, applied after
(workload_override.go), can only raise it further: HA 3 with `mt-broker-ingress` replicas 2
gives that HPA 3..12, as the operator does.
"""

from __future__ import annotations

from knative.objects import Rendered, of_kind
from models.component import ComponentSpec

# The operator's haUnSupported: the controller scales it (0 or 1) itself.
HA_UNSUPPORTED = frozenset({"pingsource-mt-adapter"})
# The operator's hasHorizontalPodOrCustomAutoscaler: workloads an autoscaler scales.
# Release HPAs are found by their scaleTargetRef as well; these are the names the
# operator hard-codes (the kafka dispatchers are scaled by a custom autoscaler, no HPA).
OPERATOR_HPA_WORKLOADS = frozenset({
    "webhook", "activator", "3scale-kourier-gateway", "eventing-webhook",
    "mt-broker-ingress", "mt-broker-filter",
})
CUSTOM_AUTOSCALED = frozenset({
    "kafka-broker-dispatcher", "kafka-source-dispatcher", "kafka-channel-dispatcher",
})
REPLICATED_KINDS = frozenset({"Deployment", "StatefulSet"})


def hpa_by_target(rendered: Rendered) -> dict[str, list[dict]]:
    """Release HPAs by the name of the Deployment/StatefulSet they scale."""
    out: dict[str, list[dict]] = {}
    for hpa in of_kind(rendered, "HorizontalPodAutoscaler"):
        target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        if target.get("kind") in REPLICATED_KINDS and target.get("name"):
            out.setdefault(target["name"], []).append(hpa)
    return out


def raise_hpa_floor(hpa: dict, replicas: int) -> None:
    """The operator's hpaTransform (hpa.go), for HA and `workloads` alike: minReplicas up
    to replicas, maxReplicas up by the same amount (so it stays above min); an HPA that
    already has as many keeps its values."""
    spec = hpa.setdefault("spec", {})
    current = int(spec.get("minReplicas", 1))
    if current >= replicas:
        return
    spec["minReplicas"] = replicas
    if "maxReplicas" in spec:
        spec["maxReplicas"] = int(spec["maxReplicas"]) + (replicas - current)


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """`replicas` on every Deployment that no autoscaler scales (HPA-scaled ones and
    pingsource-mt-adapter keep theirs), and every release HPA's minReplicas raised to at
    least `replicas` (maxReplicas raised by the same amount). A Deployment or HPA whose
    own name a `workloads` (or deprecated `deployments`) entry with replicas names is left
    to that entry, as the operator does (it compares names, not the HPA's
    scaleTargetRef)."""
    ha = spec.high_availability
    if ha is None:
        return rendered
    replicas = ha.replicas
    pinned = {w.name for w in spec.workload_overrides() if w.replicas is not None}
    hpas = hpa_by_target(rendered)
    autoscaled = set(hpas) | OPERATOR_HPA_WORKLOADS | CUSTOM_AUTOSCALED
    for obj in of_kind(rendered, "Deployment"):
        name = obj["metadata"]["name"]
        if name in autoscaled or name in HA_UNSUPPORTED or name in pinned:
            continue
        obj.setdefault("spec", {})["replicas"] = replicas
    for hpa in of_kind(rendered, "HorizontalPodAutoscaler"):
        if hpa["metadata"]["name"] not in pinned:
            raise_hpa_floor(hpa, replicas)
    return rendered
