"""What one spoke gets: a pure plan per Knative component, no Pulumi, no I/O
beyond the (cached) release files."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from config.fleet import ComponentSpec, EventingSpec, FleetEntry, ServingSpec
from knative import manifests, releases
from knative.spec import config as transforms
from knative.spec.eventing import (
    apply_default_broker_class,
    apply_sink_binding_selection_mode,
)
from knative.spec.ingress import apply_custom_certs, apply_ingress
from knative.spec.registry import apply_registry
from knative.spec.workloads import (
    apply_high_availability,
    apply_pdb_overrides,
    apply_service_overrides,
    apply_workload_overrides,
)

Component = Literal["serving", "eventing"]
NAMESPACE: dict[Component, str] = {"serving": "knative-serving", "eventing": "knative-eventing"}
KIND: dict[Component, str] = {"serving": "KnativeServing", "eventing": "KnativeEventing"}
CR_NAME: dict[Component, str] = {"serving": "knative-serving", "eventing": "knative-eventing"}
MANAGED_BY = "app.kubernetes.io/managed-by"


@dataclass
class InstallPlan:
    component: Component
    kind: str
    cr_name: str
    namespace: str
    version: str
    namespace_object: dict | None  # None: the namespace existed before; never touch it
    anchor: dict
    rendered: manifests.Rendered
    delete_crds: bool


def namespace_is_ours(labels: dict[str, str] | None) -> bool:
    """A namespace this product created carries its managed-by label; any other
    existing namespace belongs to someone else and is never modified or deleted."""
    return labels is None or labels.get(MANAGED_BY) == manifests.ANCHOR_LABEL_MANAGED_BY


def namespace_object(name: str, spec: ComponentSpec) -> dict:
    labels = dict(spec.namespace_configuration.labels)
    labels[MANAGED_BY] = manifests.ANCHOR_LABEL_MANAGED_BY
    metadata: dict = {"name": name, "labels": labels}
    if spec.namespace_configuration.annotations:
        metadata["annotations"] = dict(spec.namespace_configuration.annotations)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def check_version_step(component: Component, installed: str | None, target: str,
                       allow_minor_skip: bool) -> None:
    """The operator's rule: upgrade or downgrade by at most one minor version at a time,
    so every release's migrations run in order. An entry may accept a bigger step."""
    if installed is None or allow_minor_skip:
        return
    have = tuple(int(p) for p in installed.split(".")[:2])
    want = tuple(int(p) for p in target.split(".")[:2])
    if have[0] != want[0] or abs(have[1] - want[1]) > 1:
        step = "upgrade" if want > have else "downgrade"
        raise transforms.TransformError(
            f"{component} runs {installed} on this spoke; {target} is a {step} across more "
            f"than one minor version, which Knative does not support. Move one minor version "
            f"per `pulumi up` (e.g. {have[0]}.{have[1] + (1 if want > have else -1)} first), "
            f"or set `{component}.allowMinorSkip: true` on this entry to accept the step")


def component_urls(component: Component, spec: ComponentSpec, release_base: str,
                   version: str, ingress: str | None) -> list[str]:
    """The files one component installs, in apply order: the release's (or the
    entry's `manifests`, which replace them all), then `additionalManifests`."""
    if spec.manifests is not None:
        urls = list(spec.manifests)
    else:
        urls = releases.release_urls(release_base, component, version, ingress=ingress)
    urls += spec.additional_manifests
    return [u.replace("${VERSION}", version) for u in urls]


def customize(rendered: manifests.Rendered, spec: ComponentSpec) -> manifests.Rendered:
    """The entry's spec applied to the release objects, in the operator's order where
    it matters: images before `config` (an explicit `config-deployment` key wins),
    `high-availability` before `workloads` (a workload's own replicas win)."""
    apply_registry(rendered, spec.registry)
    transforms.merge_config(rendered, spec.config)
    if isinstance(spec, ServingSpec):
        apply_ingress(rendered, spec.ingress, spec.config)
        apply_custom_certs(rendered, spec.controller_custom_certs)
    if isinstance(spec, EventingSpec):
        apply_default_broker_class(rendered, spec.default_broker_class, spec.config)
        apply_sink_binding_selection_mode(rendered, spec.sink_binding_selection_mode)
    apply_high_availability(rendered, spec.high_availability, workloads=spec.workloads)
    apply_workload_overrides(rendered, spec.workloads)
    apply_service_overrides(rendered, spec.services)
    apply_pdb_overrides(rendered, spec.pod_disruption_budgets)
    return rendered


_RENDER_CACHE: dict[tuple[str, str, str, str], manifests.Rendered] = {}
_RENDER_LOCK = threading.Lock()


def render_component(component: Component, spec: ComponentSpec, release_base: str,
                     version: str) -> manifests.Rendered:
    """The release objects with the entry's spec applied. Entries with the same spec get
    the same (shared, read-only) result: a fleet of a hundred identical spokes renders
    once, not a hundred times."""
    key = (component, type(spec).__name__ + spec.model_dump_json(), release_base, version)
    with _RENDER_LOCK:
        cached = _RENDER_CACHE.get(key)
        if cached is None:
            cached = _RENDER_CACHE[key] = _render(component, spec, release_base, version)
        return cached


def _render(component: Component, spec: ComponentSpec, release_base: str,
            version: str) -> manifests.Rendered:
    namespace = NAMESPACE[component]
    ingress = spec.ingress.name if isinstance(spec, ServingSpec) else None
    docs: list[dict] = []
    for url in component_urls(component, spec, release_base, version, ingress):
        docs.extend(releases.load_documents(url))
    rendered = manifests.render(docs, namespace=namespace, cr_name=CR_NAME[component],
                                component=component, version=version)
    if isinstance(spec, EventingSpec) and spec.manifests is None:
        for source in spec.source.enabled_names():
            source_docs: list[dict] = []
            for url in releases.source_urls(release_base, source, version):
                source_docs.extend(releases.load_documents(url))
            rendered = manifests.add_companion(rendered, manifests.render(
                source_docs, namespace=namespace, cr_name=CR_NAME[component],
                component=component, version=version))
    return customize(rendered, spec)


def plan_component(
    component: Component,
    spec: ComponentSpec,
    release_base: str,
    existing_namespace_labels: dict[str, str] | None,
    namespace_exists: bool,
    installed_version: str | None = None,
) -> InstallPlan:
    version = releases.resolve_version(component, spec.version)
    check_version_step(component, installed_version, version, spec.allow_minor_skip)
    rendered = render_component(component, spec, release_base, version)
    namespace = NAMESPACE[component]
    ours = not namespace_exists or namespace_is_ours(existing_namespace_labels)
    return InstallPlan(
        component=component,
        kind=KIND[component],
        cr_name=CR_NAME[component],
        namespace=namespace,
        version=version,
        namespace_object=namespace_object(namespace, spec) if ours else None,
        anchor=manifests.anchor_configmap(KIND[component], CR_NAME[component], namespace),
        rendered=rendered,
        delete_crds=spec.delete_crds_on_destroy,
    )


def plan_spoke(
    entry: FleetEntry,
    release_base: str,
    namespaces: dict[str, dict[str, str] | None],
    installed: dict[str, str] | None = None,
) -> list[InstallPlan]:
    """Plans for the components the entry names. `namespaces` maps each existing
    install namespace on the spoke to its labels (absent: it does not exist);
    `installed` maps an install namespace to the version this product runs there."""
    installed = installed or {}
    plans = []
    for component, spec in (("serving", entry.serving), ("eventing", entry.eventing)):
        if spec is None:
            continue
        ns = NAMESPACE[component]  # type: ignore[index]
        plans.append(plan_component(component, spec, release_base,  # type: ignore[arg-type]
                                    namespaces.get(ns), ns in namespaces, installed.get(ns)))
    return plans
