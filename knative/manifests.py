"""Upstream release objects -> what one spoke gets, as pure functions over dicts.

Operator parity: every namespaced object lands in the install namespace (the
operator's manifestival InjectNamespace), so that one anchor ConfigMap can own them
all and no ownerReference ever crosses namespaces (Kubernetes GC deletes such
dependents). Cluster-scoped objects get no owner; Pulumi deletes them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any

from core.errors import ReleaseError
from core.names import (
    CR_NAME_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    NAME_LABEL,
    NAME_VALUE,
    SKIP_AWAIT_ANNOTATION,
    VERSION_LABEL,
    Component,
    anchor_name,
)
from knative.objects import Rendered, group, pod_spec

# Built-in kinds without a namespace; every other kind is namespaced unless a CRD in
# the same render declares it cluster-scoped.
CLUSTER_SCOPED_KINDS = frozenset({
    "Namespace",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "APIService",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "FlowSchema",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
    "PersistentVolume",
    "IngressClass",
    "GatewayClass",
    "RuntimeClass",
    "CertificateSigningRequest",
    "Node",
    "ClusterIssuer",
})

# Namespaced objects the operator keeps in their release namespace, without owner
# (its IngressServiceTransform): net-istio's knative-local-gateway Service must sit
# next to the Istio gateway pods it selects, in istio-system.
PINNED_OBJECTS = frozenset({("Service", "knative-local-gateway")})

def anchor_configmap(kind: str, cr_name: str, namespace: str) -> dict:
    """The anchor every namespaced object of the install is owned by."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": anchor_name(kind, cr_name),
            "namespace": namespace,
            "labels": {
                MANAGED_BY_LABEL: MANAGED_BY_VALUE,
                CR_NAME_LABEL: cr_name,
            },
            "annotations": {
                "operator.knative.dev/anchor": "true",
                "operator.knative.dev/protected": "true",
                "operator.knative.dev/description": (
                    f"Anchor of the {kind} {cr_name!r} install managed by knative-fleet. "
                    f"Deleting this ConfigMap makes Kubernetes garbage-collect every "
                    f"namespaced Knative object of this install on this cluster. To "
                    f"uninstall, remove the spoke from the fleet stack (or pulumi destroy) "
                    f"instead."
                ),
            },
        },
    }


def with_annotations(obj: dict, annotations: dict[str, str]) -> dict:
    """A copy of the object with `annotations` added (an anchor's owner record)."""
    meta = obj["metadata"]
    return {**obj, "metadata": {
        **meta, "annotations": {**(meta.get("annotations") or {}), **annotations}}}


def owner_reference(anchor_name: str, uid: str) -> dict:
    """A controller reference to the anchor, so deleting it cascades."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": anchor_name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def with_owner(obj: dict, ref: Any) -> dict:
    """A copy of obj owned by ref only. ref is used as given (it may be a Pulumi
    Output of owner_reference(...)); cluster-scoped objects are refused."""
    if obj.get("kind") in CLUSTER_SCOPED_KINDS:
        raise ValueError(f"{object_key(obj)} is cluster-scoped and cannot have an owner")
    # Shallow: rendered objects are shared read-only between spokes; only metadata differs.
    return {**obj, "metadata": {**(obj.get("metadata") or {}), "ownerReferences": [ref]}}


def object_key(obj: Mapping) -> str:
    """Stable identity "apiVersion/Kind:namespace/name", e.g. "apps/v1/Deployment:
    knative-serving/activator" or "v1/ConfigMap:..." for the core group (the
    pulumi-kubernetes yaml convention); the namespace is empty for cluster-scoped."""
    meta = obj.get("metadata") or {}
    return f"{obj['apiVersion']}/{obj['kind']}:{meta.get('namespace') or ''}/{meta.get('name')}"


def resource_type_token(obj: Mapping) -> str:
    """pulumi-kubernetes type token: core "v1" is "core/v1"; any other apiVersion
    (built-in or CRD-defined) is used as is, like CustomResource does."""
    api_version = obj["apiVersion"]
    if "/" not in api_version:
        api_version = f"core/{api_version}"
    return f"kubernetes:{api_version}:{obj['kind']}"


def _dedupe_key(obj: Mapping) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return (group(obj["apiVersion"]), obj["kind"], meta.get("namespace") or "", meta["name"])


def _crd_scopes(docs: list[dict]) -> set[str]:
    """Kinds that CRDs in this render declare cluster-scoped."""
    kinds: set[str] = set()
    for doc in docs:
        if doc.get("kind") == "CustomResourceDefinition":
            spec = doc.get("spec") or {}
            if spec.get("scope") == "Cluster":
                kinds.add((spec.get("names") or {}).get("kind", ""))
    return kinds


def _is_pinned(obj: Mapping, install_ns: str) -> bool:
    ns = (obj.get("metadata") or {}).get("namespace")
    name = (obj.get("metadata") or {}).get("name")
    return bool(ns) and ns != install_ns and (obj["kind"], name) in PINNED_OBJECTS


class _Rewriter:
    """Points references to moved-away namespaces at the install namespace."""

    def __init__(self, old: set[str], new: str) -> None:
        self.old, self.new = old, new
        alts = "|".join(re.escape(ns) for ns in sorted(old, key=len, reverse=True))
        # "<svc>.<ns>" / "<svc>.<ns>.svc..." DNS names, and "<ns>/<name>" references.
        self.pattern = re.compile(
            rf"(?<=[A-Za-z0-9]\.)(?:{alts})(?=\.svc\b|$|[:/\s\"',])"
            rf"|(?<![\w./-])(?:{alts})(?=/[A-Za-z0-9])"
        )

    def text(self, value: str) -> str:
        if value in self.old:
            return self.new
        return self.pattern.sub(self.new, value)

    def namespace_fields(self, node: Any) -> None:
        """Every `namespace: <old>` field: RBAC subjects, webhook and APIService
        clientConfig services, and any other reference inside the object."""
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "namespace" and isinstance(value, str) and value in self.old:
                    node[key] = self.new
                else:
                    self.namespace_fields(value)
        elif isinstance(node, list):
            for item in node:
                self.namespace_fields(item)

    def apply(self, obj: dict) -> None:
        kind = obj["kind"]
        if kind == "CustomResourceDefinition":
            # Only the conversion webhook; the schemas are large and name no namespace.
            conversion = (obj.get("spec") or {}).get("conversion")
            if conversion:
                self.namespace_fields(conversion)
            return
        self.namespace_fields(obj)
        if kind == "ConfigMap" and isinstance(obj.get("data"), dict):
            data = obj["data"]
            for key, value in data.items():
                if not key.startswith("_") and isinstance(value, str):
                    data[key] = self.text(value)
        spec = pod_spec(obj)
        if spec is not None:
            for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
                for env in container.get("env") or []:
                    if isinstance(env.get("value"), str):
                        env["value"] = self.text(env["value"])


ISTIO_INJECT_LABEL = "sidecar.istio.io/inject"


def _name_job(obj: dict, component: str, version: str | None) -> None:
    """The operator's JobTransform: a fixed, versioned name instead of generateName,
    so each release gets its own (immutable) Job and every object has a name; and its
    pod template labelled `sidecar.istio.io/inject: "false"` unless the release set that
    label (an Istio sidecar would keep the Job from ever completing)."""
    meta = obj["metadata"]
    version = version or (meta.get("labels") or {}).get(VERSION_LABEL)
    suffix = f"{component}-{version}" if version else component
    generate = meta.pop("generateName", None)
    if meta.get("name"):
        meta["name"] = f"{meta['name']}-{suffix}"
    elif generate:
        meta["name"] = f"{generate}{suffix}"
    template = obj.setdefault("spec", {}).setdefault("template", {})
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    if not labels.get(ISTIO_INJECT_LABEL):
        labels[ISTIO_INJECT_LABEL] = "false"


def _skip_await(meta: dict) -> None:
    meta.setdefault("annotations", {})[SKIP_AWAIT_ANNOTATION] = "true"


def render(
    docs: Iterable[dict],
    *,
    namespace: str,
    cr_name: str,
    component: Component,
    version: str | None = None,
) -> Rendered:
    """Deep copies of docs, transformed for one install namespace and split for ownership.

    Namespace objects are dropped; namespaced objects move into `namespace` (except
    PINNED_OBJECTS) and references to the namespaces they left are rewritten; every
    object gets the managed-by and cr-name labels, and the operator's
    app.kubernetes.io/name; objects the operator does not wait
    for (Services, Jobs, pinned objects) get pulumi.com/skipAwait; Jobs
    get the operator's versioned names. Duplicates by (group, kind, namespace, name)
    keep the last content at the first position.
    """
    docs = list(docs)
    cluster_kinds = CLUSTER_SCOPED_KINDS | _crd_scopes(docs)
    dropped: list[str] = []
    kept: list[dict] = []
    namespace_metadata: dict = {}
    for doc in docs:
        if doc.get("kind") == "Namespace" and group(doc.get("apiVersion", "")) == "":
            meta = doc.get("metadata") or {}
            name = meta.get("name", "")
            if name not in dropped:
                dropped.append(name)
            namespace_metadata = {k: dict(meta[k]) for k in ("labels", "annotations")
                                  if meta.get(k)}
        else:
            kept.append(doc)

    moved = {n for n in dropped if n}
    pinned_ns: set[str] = set()
    for doc in kept:
        if doc["kind"] in cluster_kinds:
            continue
        ns = (doc.get("metadata") or {}).get("namespace")
        if _is_pinned(doc, namespace):
            pinned_ns.add(ns)
        elif ns:
            moved.add(ns)
    moved -= pinned_ns | {namespace}
    rewriter = _Rewriter(moved, namespace) if moved else None

    out: dict[tuple[str, str, str, str], tuple[dict, str, str]] = {}
    for doc in kept:
        obj = copy.deepcopy(doc)
        meta = obj.setdefault("metadata", {})
        kind = obj["kind"]
        if kind in cluster_kinds:
            place, origin = "cluster", ""
            meta.pop("namespace", None)
        elif _is_pinned(obj, namespace):
            place, origin = "external", meta["namespace"]
            _skip_await(meta)
        else:
            place, origin = "namespaced", meta.get("namespace") or namespace
            meta["namespace"] = namespace
        if rewriter is not None:
            rewriter.apply(obj)
        labels = meta.get("labels") or {}
        labels[MANAGED_BY_LABEL] = MANAGED_BY_VALUE
        labels[CR_NAME_LABEL] = cr_name
        labels[NAME_LABEL] = NAME_VALUE[component]
        meta["labels"] = labels
        if kind == "Service" and group(obj["apiVersion"]) == "":
            # The operator's readiness rule is "every Deployment Available"; it waits for
            # no Service. Pulumi's Service await would wait for endpoints (and, for a
            # LoadBalancer, an address a spoke without a load balancer never gets), each
            # holding one of the engine's parallel slots while the Deployments behind
            # it start.
            _skip_await(meta)
        if kind in ("ClusterRole", "Role") and obj.get("rules") == []:
            # The API server stores no empty rule list; applied as written it would show
            # as a change on every preview (redis-source's redisstream-adapter role).
            del obj["rules"]
        if kind == "Job" and group(obj["apiVersion"]) == "batch":
            _name_job(obj, component, version)
            # The operator does not wait for its post-install Jobs; Pulumi would.
            _skip_await(meta)
        if not meta.get("name"):
            raise ReleaseError(f"release object {kind} in {origin or 'cluster'} has no name")
        key = _dedupe_key(obj)
        if key in out and out[key][1] != origin:
            raise ReleaseError(
                f"moving {kind} {meta['name']!r} from namespace {origin!r} into {namespace!r} "
                f"collides with the one from {out[key][1]!r}"
            )
        out[key] = (obj, origin, place)

    rendered = Rendered(crds=[], cluster_scoped=[], namespaced=[], namespaces_dropped=dropped,
                        namespace_metadata=namespace_metadata)
    for obj, _, place in out.values():
        if obj["kind"] == "CustomResourceDefinition":
            rendered.crds.append(obj)
        elif place == "cluster":
            rendered.cluster_scoped.append(obj)
        elif place == "external":
            rendered.external.append(obj)
        else:
            rendered.namespaced.append(obj)
    return rendered


def add_companion(base: Rendered, extra: Rendered) -> Rendered:
    """`base` plus the objects of a companion release (an Eventing source) that `base`
    does not already have. Sources ship their own copies of shared objects such as
    `config-logging`; moved into the install namespace they would collide with the
    core's, which the core's controllers own, so the core's copy wins."""
    have = {_dedupe_key(o) for o in [*base.crds, *base.cluster_scoped, *base.namespaced,
                                     *base.external]}

    def new(objs: list[dict]) -> list[dict]:
        return [o for o in objs if _dedupe_key(o) not in have]

    return Rendered(
        crds=[*base.crds, *new(extra.crds)],
        cluster_scoped=[*base.cluster_scoped, *new(extra.cluster_scoped)],
        namespaced=[*base.namespaced, *new(extra.namespaced)],
        namespaces_dropped=[*base.namespaces_dropped,
                            *(n for n in extra.namespaces_dropped
                              if n not in base.namespaces_dropped)],
        external=[*base.external, *new(extra.external)],
        # Applied after the core's, the companion's Namespace object is the last one.
        namespace_metadata=(extra.namespace_metadata if extra.namespaces_dropped
                            else base.namespace_metadata),
    )
