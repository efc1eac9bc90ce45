"""What the admission policy holds each object of the plan to: for every object the
identity may write, by `group/resource/namespace/name`, the values of the fields the
fleet sets that grant something (labels, annotations, a ConfigMap's or Secret's data, a
Secret's type, a workload's images, commands, service account, security contexts and
volumes, a Service's selector and type, a webhook's or a conversion's backend, a role's
rules, a binding's subjects), each as the list of values the plans give it (one per
release when the stack's specs hold several versions).

Fields others own are not held: what Knative's webhook writes (caBundle, the rules it
fills, certificates), status, and what the API server defaults. Pure functions over the
plan's plain objects; fleet.admission_policy turns the entries into CEL.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from core.names import (
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    OWNER_ANNOTATION,
    OWNER_ID_ANNOTATION,
    SKIP_AWAIT_ANNOTATION,
)
from fleet.objects import CRD_NUDGE_ANNOTATION
from fleet.rights import OWN_OBJECTS, RBAC_GROUP, resource_of

RBAC_KINDS = ("ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")
RULE_FIELDS = ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")
# The subject kinds the API server gives the RBAC group when a binding leaves it out.
GROUP_DEFAULTED = ("User", "Group")
# The resources whose pod template the policy holds (`spec.template.spec`).
WORKLOADS = ("apps/deployments", "apps/statefulsets", "apps/daemonsets",
             "apps/replicasets", "batch/jobs")
WEBHOOK_CONFIGURATIONS = ("admissionregistration.k8s.io/mutatingwebhookconfigurations",
                          "admissionregistration.k8s.io/validatingwebhookconfigurations")
CRDS = "apiextensions.k8s.io/customresourcedefinitions"
# Annotations every apply may carry (fleet.objects.APPLY_ANNOTATIONS, the gate's
# skipAwait): how the provider applies, nothing the cluster acts on; any value.
APPLY_ANNOTATIONS = ("pulumi.com/patchFieldManager", "pulumi.com/patchForce",
                     SKIP_AWAIT_ANNOTATION)
# What a CRD of the plan may carry while it is being deleted, any value: the CRDs-first
# step's nudge (lifecycle.crds_first.delete_all).
DELETING_CRD_ANNOTATIONS = (CRD_NUDGE_ANNOTATION,)
# A ConfigMap key Knative reads as documentation only (its webhook checks it against the
# `knative.dev/example-checksum` annotation, which is held): any value.
FREE_DATA = ("_example",)
# The owner record on an install's anchors (ownership.records): the stack's own, any value.
ANCHOR_FREE_ANNOTATIONS = (OWNER_ID_ANNOTATION, OWNER_ANNOTATION)
# The hold Lease's annotations (ownership.hold): who holds it, any value.
HOLD_FREE_ANNOTATIONS = ("knative-fleet.dev/held-by", "knative-fleet.dev/held-by-stack")
ANCHOR_ANNOTATION = "operator.knative.dev/anchor"


def pruned(value: Any) -> Any:
    """The value as the API server returns it: empty and unset fields left out
    (`omitempty`), list items kept in their order."""
    if isinstance(value, Mapping):
        kept = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def _subject(subject: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(pruned(subject))
    if out.get("kind") in GROUP_DEFAULTED:
        out.setdefault("apiGroup", RBAC_GROUP)
    return out


def rbac_body(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the policy holds a role or binding of this name to: a role's rules (or its
    aggregation rule), a binding's role reference and subjects."""
    if obj["kind"] in ("ClusterRole", "Role"):
        if obj.get("aggregationRule"):
            return {"aggregationRule": pruned(obj["aggregationRule"])}
        rules = [{k: r[k] for k in RULE_FIELDS if r.get(k)} for r in obj.get("rules") or []]
        return {"rules": rules}
    return {"roleRef": pruned(obj["roleRef"]),
            "subjects": [_subject(s) for s in obj.get("subjects") or []]}


def service_ref(ref: Mapping[str, Any] | None) -> str:
    """`namespace/name:port` of a webhook's service reference, as the policy's CEL writes
    it from the live object (the port defaults to 443). The path is left out: Knative's
    webhook writes its own into the references it serves (`/resource-conversion`), and a
    path only chooses a handler of the Service the reference names."""
    ref = ref or {}
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}:{ref.get('port') or 443}"


def volume_source(volume: Mapping[str, Any]) -> str:
    """What a volume mounts, as the policy's CEL writes it: its source kind and the
    object it names (a projected volume, each source's)."""
    if "secret" in volume:
        return "secret:" + (volume["secret"] or {}).get("secretName", "")
    if "configMap" in volume:
        return "configMap:" + (volume["configMap"] or {}).get("name", "")
    if "emptyDir" in volume:
        return "emptyDir:"
    if "downwardAPI" in volume:
        return "downwardAPI:"
    if "projected" in volume:
        parts = []
        for source in (volume["projected"] or {}).get("sources") or []:
            if "secret" in source:
                parts.append("secret=" + source["secret"].get("name", ""))
            elif "configMap" in source:
                parts.append("configMap=" + source["configMap"].get("name", ""))
            elif "serviceAccountToken" in source:
                parts.append("token=" + source["serviceAccountToken"].get("audience", ""))
            elif "downwardAPI" in source:
                parts.append("downwardAPI=")
            else:
                parts.append("other=")
        return "projected:" + ",".join(parts)
    return "other:"


def host_namespaces(pod: Mapping[str, Any]) -> str:
    """`network/pid/ipc`, each `true` or `false`: which host namespaces a pod shares, as
    the policy's CEL writes it from the live object."""
    return "/".join("true" if pod.get(f) else "false"
                    for f in ("hostNetwork", "hostPID", "hostIPC"))


def container_shape(container: Mapping[str, Any]) -> dict[str, Any]:
    """A container's fields that decide what runs and with which rights."""
    return {"image": container.get("image", ""), "command": container.get("command") or [],
            "args": container.get("args") or [],
            "securityContext": pruned(container.get("securityContext") or {})}


def _add(values: dict[str, list[Any]], key: str, value: Any) -> None:
    seen = values.setdefault(key, [])
    if value not in seen:
        seen.append(value)


def _add_map(held: dict[str, Any], field: str, values: Mapping[str, Any] | None) -> None:
    target = held.setdefault(field, {})
    for key, value in (values or {}).items():
        _add(target, key, value)


def _add_value(held: dict[str, Any], field: str, value: Any) -> None:
    seen = held.setdefault(field, [])
    if value not in seen:
        seen.append(value)


def _secret_data(obj: Mapping[str, Any]) -> dict[str, str]:
    data = dict(obj.get("data") or {})
    for key, text in (obj.get("stringData") or {}).items():
        data[key] = base64.b64encode(str(text).encode()).decode()
    return data


def _hold_pod(held: dict[str, Any], template: Mapping[str, Any]) -> None:
    spec = template.get("spec") or {}
    _add_map(held, "podLabels", (template.get("metadata") or {}).get("labels"))
    _add_value(held, "serviceAccounts", spec.get("serviceAccountName") or "")
    _add_value(held, "podSecurity", pruned(spec.get("securityContext") or {}))
    _add_value(held, "hosts", host_namespaces(spec))
    containers = held.setdefault("containers", {})
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _add(containers, container["name"], container_shape(container))
    volumes = held.setdefault("volumes", {})
    for volume in spec.get("volumes") or []:
        _add(volumes, volume["name"], volume_source(volume))


def _hold_kind(held: dict[str, Any], resource: str, obj: Mapping[str, Any]) -> None:
    """The fields of the object's kind that the policy holds."""
    if resource in ("/configmaps", "/secrets"):
        data = _secret_data(obj) if resource == "/secrets" else obj.get("data")
        _add_map(held, "data", {k: v for k, v in (data or {}).items() if k not in FREE_DATA})
        _add_map(held, "binaryData", obj.get("binaryData"))
        if resource == "/secrets":
            _add_value(held, "types", obj.get("type") or "Opaque")
    elif resource in WORKLOADS:
        _hold_pod(held, obj["spec"]["template"])
    elif resource == "/services":
        spec = obj.get("spec") or {}
        _add_value(held, "selectors", pruned(spec.get("selector") or {}))
        _add_value(held, "serviceTypes", spec.get("type") or "ClusterIP")
        _add_value(held, "externalNames", spec.get("externalName") or "")
    elif resource in WEBHOOK_CONFIGURATIONS:
        webhooks = held.setdefault("webhooks", {})
        for webhook in obj.get("webhooks") or []:
            _add(webhooks, webhook["name"],
                 service_ref((webhook.get("clientConfig") or {}).get("service")))
    elif resource == CRDS:
        conversion = (obj.get("spec") or {}).get("conversion") or {}
        held.setdefault("conversions", [])
        if conversion.get("strategy") == "Webhook":
            config = (conversion.get("webhook") or {}).get("clientConfig") or {}
            _add_value(held, "conversions", service_ref(config.get("service")))
    elif resource.startswith(f"{RBAC_GROUP}/"):
        _add_value(held, "rbac", rbac_body(obj))


def object_key(resource: str, namespace: str, name: str) -> str:
    """`group/resource/namespace/name`, as the policy builds it from a request."""
    return f"{resource}/{namespace}/{name}"


def plan_entries(objects: Iterable[Mapping[str, Any]],
                 plurals: Mapping[tuple[str, str], str]) -> dict[str, dict[str, Any]]:
    """{object key: what the policy holds that object to} for every object of the plans
    and knative-fleet's own (fleet.rights.OWN_OBJECTS)."""
    entries: dict[str, dict[str, Any]] = {}
    for obj in objects:
        group, plural = resource_of(obj, plurals)
        resource = f"{group}/{plural}"
        meta = obj["metadata"]
        key = object_key(resource, meta.get("namespace") or "", meta["name"])
        held = entries.setdefault(key, {})
        _add_map(held, "labels", meta.get("labels"))
        _add_map(held, "annotations", meta.get("annotations"))
        if resource == "/namespaces":  # the API server labels every namespace with its name
            _add_map(held, "labels", {"kubernetes.io/metadata.name": meta["name"]})
        if ANCHOR_ANNOTATION in (meta.get("annotations") or {}):
            held["freeAnnotations"] = list(ANCHOR_FREE_ANNOTATIONS)
        _hold_kind(held, resource, obj)
    for group, plural, namespace, name in OWN_OBJECTS:
        entries[object_key(f"{group}/{plural}", namespace, name)] = {
            "labels": {MANAGED_BY_LABEL: [MANAGED_BY_VALUE]}, "annotations": {},
            "freeAnnotations": list(HOLD_FREE_ANNOTATIONS)}
    return dict(sorted(entries.items()))


def anchor_names(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """The install anchors' names: the one owner the plan's namespaced objects name."""
    return sorted({o["metadata"]["name"] for o in objects
                   if ANCHOR_ANNOTATION in (o["metadata"].get("annotations") or {})})
