"""What one spoke gets: a pure plan per Knative component, no Pulumi, no I/O
beyond the (cached) release files."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from config.identity import DEFAULT_SPOKE_IDENTITY, subject_of
from core.names import CR_NAME, KIND, NAMESPACE, Component
from knative import manifests, releases, secret_reads
from knative.component_files import component_urls, enabled_sources
from knative.install_namespace import namespace_is_ours, namespace_object
from knative.objects import defined_kinds, group_kind
from knative.release_fetch import load_documents
from knative.transforms import TRANSFORMS
from knative.version_step import check_version_step
from models.component import ComponentSpec, EventingSpec, ServingSpec

DEFAULT_SUBJECT = subject_of(DEFAULT_SPOKE_IDENTITY)


class Stage(StrEnum):
    """The steps of an install's registration order (InstallPlan.stages says what each
    holds and waits for)."""

    NAMESPACE = "namespace"
    READS = "reads"
    CRDS = "crds"
    CLUSTER = "cluster"
    CLUSTER_CUSTOM = "cluster-custom"
    ANCHOR = "anchor"
    NAMESPACED = "namespaced"
    DEPLOYMENTS = "deployments"
    CUSTOM = "custom"


@dataclass(frozen=True)
class InstallStage:
    """One step of an install's registration order: objects registered together, each
    after every object of the stages named in `after`."""

    name: Stage
    objects: tuple[dict, ...]
    after: tuple[Stage, ...]  # stages every object of this one waits for
    owned: bool  # objects get the ownerReference to the plan's anchor


@dataclass
class InstallPlan:
    component: Component
    kind: str
    cr_name: str
    namespace: str
    version: str
    namespace_object: dict | None  # None: the namespace existed before; never touch it
    anchor: dict
    reads: tuple[dict, ...]  # the identity's Secret reads in the namespace (none: no Secrets)
    rendered: manifests.Rendered
    delete_crds: bool

    @property
    def stages(self) -> tuple[InstallStage, ...]:
        """Every object of the install, in registration order, with what each waits for
        (and so, on uninstall, what goes first):

        - namespace: the install namespace (none when it existed before);
        - reads: the spoke identity's Secret reads in the install namespace
          (knative.secret_reads), after the namespace, deleted after every Secret;
        - crds, and cluster (cluster-scoped objects of built-in kinds, and the objects
          pinned to another namespace), after the namespace;
        - cluster-custom: cluster-scoped objects of kinds this release's CRDs define, once
          those CRDs exist;
        - anchor: the one gate between the cluster-wide objects and the namespaced ones,
          created after all of the above and deleted after every owned object, so each
          namespaced object names one dependency instead of a hundred (which keeps the
          stack state, and every checkpoint write, small);
        - namespaced and deployments: the install namespace's objects, owned by the anchor;
        - custom: the release's own custom resources, which go through its admission
          webhooks, which answer only once their Deployments are Available (the operator
          retries instead).
        """
        rendered = self.rendered
        custom_kinds = defined_kinds(rendered.crds)
        unowned = [*rendered.cluster_scoped, *rendered.external]
        cluster = [o for o in unowned if group_kind(o) not in custom_kinds]
        cluster_custom = [o for o in unowned if group_kind(o) in custom_kinds]
        plain = [o for o in rendered.namespaced if group_kind(o) not in custom_kinds]
        custom = [o for o in rendered.namespaced if group_kind(o) in custom_kinds]
        namespace = (self.namespace_object,) if self.namespace_object is not None else ()
        return (
            InstallStage(Stage.NAMESPACE, namespace, (), owned=False),
            InstallStage(Stage.READS, self.reads, (Stage.NAMESPACE,), owned=False),
            InstallStage(Stage.CRDS, tuple(rendered.crds), (Stage.NAMESPACE,), owned=False),
            InstallStage(Stage.CLUSTER, tuple(cluster), (Stage.NAMESPACE,), owned=False),
            InstallStage(Stage.CLUSTER_CUSTOM, tuple(cluster_custom), (Stage.CRDS,),
                         owned=False),
            InstallStage(Stage.ANCHOR, (self.anchor,),
                         (Stage.NAMESPACE, Stage.READS, Stage.CRDS, Stage.CLUSTER,
                          Stage.CLUSTER_CUSTOM),
                         owned=False),
            InstallStage(Stage.NAMESPACED, tuple(o for o in plain if o["kind"] != "Deployment"),
                         (Stage.ANCHOR,), owned=True),
            InstallStage(Stage.DEPLOYMENTS,
                         tuple(o for o in plain if o["kind"] == "Deployment"),
                         (Stage.ANCHOR,), owned=True),
            InstallStage(Stage.CUSTOM, tuple(custom), (Stage.ANCHOR, Stage.DEPLOYMENTS),
                         owned=True),
        )


def customize(rendered: manifests.Rendered, spec: ComponentSpec) -> manifests.Rendered:
    """The entry's spec applied to the release objects: every transform of the index
    (knative.transforms.TRANSFORMS), in its order."""
    for transform in TRANSFORMS:
        rendered = transform(rendered, spec)
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
        docs.extend(load_documents(url))
    rendered = manifests.render(docs, namespace=namespace, cr_name=CR_NAME[component],
                                component=component, version=version)
    for source in enabled_sources(spec):
        source_docs: list[dict] = []
        for url in releases.source_urls(release_base, source, version):
            source_docs.extend(load_documents(url))
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
    identity: Mapping[str, str] = DEFAULT_SUBJECT,
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
        namespace_object=namespace_object(
            namespace, spec, rendered.namespace_metadata,
            {manifests.NAME_LABEL: manifests.NAME_VALUE[component]}) if ours else None,
        anchor=manifests.anchor_configmap(KIND[component], CR_NAME[component], namespace),
        reads=secret_reads.reads_objects(namespace, identity)
        if secret_reads.holds_secrets(rendered.namespaced) else (),
        rendered=rendered,
        delete_crds=spec.delete_crds_on_destroy,
    )


def plan_spoke(
    serving: ServingSpec | None,
    eventing: EventingSpec | None,
    release_base: str,
    namespaces: dict[str, dict[str, str] | None],
    installed: dict[str, str] | None = None,
    identity: Mapping[str, str] = DEFAULT_SUBJECT,
) -> list[InstallPlan]:
    """Plans for the components one spoke gets (a spec of None: not installed).
    `namespaces` maps each existing install namespace on the spoke to its labels (absent:
    it does not exist); `installed` maps an install namespace to the version this product
    runs there; `identity` is the RBAC subject the spoke's credentials are for."""
    installed = installed or {}
    plans = []
    specs: tuple[tuple[Component, ComponentSpec | None], ...] = (
        ("serving", serving), ("eventing", eventing))
    for component, spec in specs:
        if spec is None:
            continue
        ns = NAMESPACE[component]
        plans.append(plan_component(component, spec, release_base, namespaces.get(ns),
                                    ns in namespaces, installed.get(ns), identity))
    return plans
