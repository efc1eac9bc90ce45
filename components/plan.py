"""What one spoke gets: a pure plan per Knative component, no Pulumi, no I/O
beyond the (cached) release files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components import manifests, releases, transforms
from components.fleet_config import ComponentSpec, FleetEntry, ServingSpec

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


def plan_component(
    component: Component,
    spec: ComponentSpec,
    release_base: str,
    existing_namespace_labels: dict[str, str] | None,
    namespace_exists: bool,
) -> InstallPlan:
    version = releases.resolve_version(component, spec.version)
    ingress = spec.ingress.name if isinstance(spec, ServingSpec) else None
    docs: list[dict] = []
    for url in releases.release_urls(release_base, component, version, ingress=ingress):
        docs.extend(releases.load_documents(url))
    namespace = NAMESPACE[component]
    rendered = manifests.render(docs, namespace=namespace, cr_name=CR_NAME[component],
                                component=component, version=version)
    transforms.merge_config(rendered, spec.config)
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
) -> list[InstallPlan]:
    """Plans for the components the entry names. `namespaces` maps each existing
    install namespace on the spoke to its labels (absent: it does not exist)."""
    plans = []
    for component, spec in (("serving", entry.serving), ("eventing", entry.eventing)):
        if spec is None:
            continue
        ns = NAMESPACE[component]  # type: ignore[index]
        plans.append(plan_component(component, spec, release_base,  # type: ignore[arg-type]
                                    namespaces.get(ns), ns in namespaces))
    return plans
