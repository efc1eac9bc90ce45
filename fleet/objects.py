"""Each install object of a spoke with the options its registration needs: its resource
name and type, the annotations every apply carries, what the cluster owns, what is kept
on delete, and which aggregated-role guard it waits for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleet import crds_first, held_namespaced, held_rbac
from fleet.plan import AggregatedRoleGuard, ComponentInstall, PlannedObject, PlannedStage, Role
from knative import crd_defaults, manifests
from knative.aggregated_roles import feeders_by_role, is_aggregated
from knative.plan import InstallPlan, InstallStage, Stage
from knative.server_owned import WEBHOOK_CONFIGURATIONS, server_owned_fields
from knative.webhook_backends import webhook_deployments

# One field manager for every stack and every reinstall: CRDs kept by an earlier
# destroy, or objects applied by another fleet stack, are adopted instead of
# failing with server-side-apply conflicts; the install's own fields win, as the
# operator's do.
APPLY_ANNOTATIONS = {
    "pulumi.com/patchFieldManager": "knative-fleet",
    "pulumi.com/patchForce": "true",
}
# What a CRDs-first step's delete writes on a CRD whose deletion the API server's
# finalizer gave up on (lifecycle.crds_first.delete_all): any change makes it look again.
CRD_NUDGE_ANNOTATION = "knative-fleet.dev/finalizer-nudge"

# namespaceConfiguration applies when the namespace is created; its labels and
# annotations are not diffed afterwards.
NAMESPACE_IGNORED = ("metadata.labels", "metadata.annotations")


def resource_name(spoke: str, obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{spoke}:{ns}/{meta['name']}" if ns else f"{spoke}:{meta['name']}"


def applied(obj: dict, skip_await: bool = False) -> dict:
    """The object as the provider applies it: the apply annotations and, when a wave gate
    waits instead of the provider, `pulumi.com/skipAwait`."""
    meta = dict(obj["metadata"])
    extra = {manifests.SKIP_AWAIT_ANNOTATION: "true"} if skip_await else {}
    meta["annotations"] = {**(meta.get("annotations") or {}), **extra, **APPLY_ANNOTATIONS}
    return {**obj, "metadata": meta}


def planned(spoke: str, obj: dict, gated: bool, answers_webhooks: bool = False,
            **options: Any) -> PlannedObject:
    """A wave gate waits for a gated install's Deployments instead of the provider, except
    for those that answer the install's webhooks: the release's custom resources go
    through those webhooks, so the provider waits for them as in an install without waves."""
    skip_await = gated and obj["kind"] == "Deployment" and not answers_webhooks
    return PlannedObject(resource_name(spoke, obj), manifests.resource_type_token(obj),
                         applied(obj, skip_await), **options)


def _ignored(obj: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(server_owned_fields(obj))


def guards_of(feeders: Mapping[str, Sequence[str]],
              guards: Sequence[AggregatedRoleGuard]) -> dict[str, tuple[str, ...]]:
    """{ClusterRole name: the aggregated roles it feeds, whose guards it waits for}."""
    out: dict[str, list[str]] = {}
    for guard in guards:
        for feeder in feeders[guard.role.object_name]:
            out.setdefault(feeder, []).append(guard.role.object_name)
    return {name: tuple(roles) for name, roles in out.items()}


def aggregated_role_guards(spoke: str, plans: Sequence[InstallPlan], gated: bool
                           ) -> tuple[dict[str, list[str]], tuple[AggregatedRoleGuard, ...]]:
    """The aggregated ClusterRoles of the spoke's install, each with its guard, and which
    roles feed each of them."""
    cluster_roles = [o for p in plans for o in p.rendered.cluster_scoped]
    feeders = feeders_by_role(cluster_roles)
    if not feeders:
        return {}, ()
    guards = tuple(
        AggregatedRoleGuard(
            f"{spoke}:{obj['metadata']['name']}",
            # The guard deletes the role and whatever the controller re-creates; a
            # delete by the provider would wait its whole timeout on a re-creation
            # (`pulumi.com/skipAwait` does not reach deletes of ClusterRoles).
            planned(spoke, obj, gated, role=Role.AGGREGATED, ignore_changes=_ignored(obj),
                    retain_on_delete=True))
        for obj in cluster_roles if is_aggregated(obj))
    return feeders, guards


def component_install(spoke: str, plan: InstallPlan, gated: bool,
                      guards_of: Mapping[str, tuple[str, ...]]) -> ComponentInstall:
    """The plan's stages with every object's options (knative.plan.InstallPlan.stages
    says what each stage holds and waits for)."""
    stages = []
    backends = webhook_deployments(o for stage in plan.stages for o in stage.objects)
    for stage in plan.stages:
        objects = tuple(_stage_object(spoke, plan, stage, obj, gated, guards_of, backends)
                        for obj in stage.objects)
        stages.append(PlannedStage(stage.name, stage.after, objects,
                                   readiness=stage.name is Stage.DEPLOYMENTS))
    configurations = tuple(sorted(
        f"{o['kind']}/{o['metadata']['name']}" for stage in plan.stages for o in stage.objects
        if o["kind"] in WEBHOOK_CONFIGURATIONS))
    return ComponentInstall(
        plan.component, plan.version, tuple(stages),
        webhooks_first=f"{spoke}:{plan.namespace}/webhook-configurations-first"
        if configurations else None,
        webhook_configurations=configurations,
        crds_first=crds_first.step_name(spoke, plan.namespace)
        if any(s.name is Stage.CRDS and s.objects for s in plan.stages) else None,
        cluster_rbac=held_rbac.step_name(spoke, plan.namespace)
        if any(held_rbac.is_held(s.stage, o) for s in stages for o in s.objects) else None,
        namespaced_objects=held_namespaced.step_name(spoke, plan.namespace)
        if any(held_namespaced.is_held(s.stage, o) for s in stages for o in s.objects)
        else None)


def _stage_object(spoke: str, plan: InstallPlan, stage: InstallStage, obj: dict,
                  gated: bool, guards_of: Mapping[str, tuple[str, ...]],
                  backends: frozenset[tuple[str, str]]) -> PlannedObject:
    if stage.name is Stage.ANCHOR:
        return planned(spoke, obj, gated, role=Role.ANCHOR)
    if stage.owned:
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        return planned(spoke, obj, gated, owned=True, ignore_changes=_ignored(obj),
                       answers_webhooks=obj["kind"] == "Deployment" and key in backends)
    if stage.name is Stage.NAMESPACE:
        return planned(spoke, obj, gated, ignore_changes=NAMESPACE_IGNORED)
    if stage.name is Stage.CRDS:
        # Held and applied by the component's CRDs-first step (fleet.crds_first), which
        # deletes them on destroy as `retain_on_delete` says; registered typed only while
        # an earlier release's state holds them so (fleet.held_typed).
        return planned(spoke, obj, gated, retain_on_delete=not plan.delete_crds,
                       server_defaults=crd_defaults.server_defaults(obj) or None)
    if is_aggregated(obj):
        # Stands for the role its guard registered first: nothing of it is applied here.
        return PlannedObject(resource_name(spoke, obj), manifests.resource_type_token(obj), obj,
                             role=Role.AGGREGATED)
    role_name = obj["metadata"]["name"] if obj["kind"] == "ClusterRole" else None
    return planned(spoke, obj, gated, ignore_changes=_ignored(obj),
                   guards=guards_of.get(role_name, ()) if role_name else ())
