"""One ComponentResource per spoke: the thin layer that wires planned objects
to a pulumi-kubernetes Provider for that spoke."""

from __future__ import annotations

import functools
import json

import pulumi
import pulumi_kubernetes as k8s

from access import SpokeConnection
from components.aggregated_role_guard import AggregatedRoleGuard, AggregatedRoleSweep
from components.release_object import ReleaseObject
from components.spoke_access import connection_props
from knative import manifests
from knative.aggregated_roles import feeders_by_role, is_aggregated
from knative.plan import InstallPlan


def cluster_identifier(profile_namespace: str, profile_name: str) -> str:
    """Stable across token rotation, new CAs and new server URLs (none of them
    replaces a resource); moving the entry to another ClusterProfile changes it,
    so the preview shows every object of the spoke being replaced."""
    return f"clusterprofile/{profile_namespace}/{profile_name}"


def _name(spoke: str, obj: dict) -> str:
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{spoke}:{ns}/{meta['name']}" if ns else f"{spoke}:{meta['name']}"


class Spoke(pulumi.ComponentResource):
    """Knative on one spoke: its provider, namespaces, anchors and release objects."""

    deployments: list[pulumi.Resource]
    registered: list[pulumi.Resource]
    ready: pulumi.Output[bool]

    def __init__(
        self,
        name: str,
        *,
        kubeconfig: dict,
        identifier: str,
        plans: list[InstallPlan],
        connection: SpokeConnection,
        plugin_timeout_s: float = 30.0,
        delete_unreachable: bool = False,
        after: list[pulumi.Resource] | None = None,
        gated: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`after`: what every resource of the spoke waits for (the fleet membership and,
        in a rollout, the gate of the wave before). `gated`: a wave gate (not the
        provider) waits for the Deployments, within the wave's timeout."""
        super().__init__("knative-fleet:index:Spoke", name, None, opts)
        after = list(after or [])
        self._gated = gated
        self.provider = k8s.Provider(
            name,
            kubeconfig=pulumi.Output.secret(json.dumps(kubeconfig, sort_keys=True)),
            cluster_identifier=identifier,
            enable_server_side_apply=True,
            # A release ConfigMap or Secret that changes (a `config` key, an upgrade) is
            # updated in place, as the operator does: by default the provider treats
            # both kinds as immutable and replaces them, so the running controllers see
            # their configuration deleted and created again.
            enable_config_map_mutable=True,
            enable_secret_mutable=True,
            delete_unreachable=delete_unreachable,
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
        self.deployments = []
        self.registered = []
        self._roots: list[pulumi.Resource] = after
        self._aggregated: dict[str, pulumi.Resource] = {}
        self._guards_of: dict[str, list[pulumi.Resource]] = {}
        self._guard_aggregated_roles(name, plans, connection_props(connection),
                                     plugin_timeout_s)
        for plan in plans:
            self._install(name, plan)
        self.ready = (
            pulumi.Output.all(*[d.id for d in self.deployments]).apply(lambda _: True)
            if self.deployments else pulumi.Output.from_input(True)
        )
        self.register_outputs({"ready": self.ready})

    def _opts(self, **kwargs: object) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self.provider, **kwargs)

    def _raw(self, spoke: str, obj: dict, **kwargs: object) -> ReleaseObject:
        if self._gated and obj["kind"] == "Deployment":
            obj = _skip_await(obj)
        res = ReleaseObject(
            manifests.resource_type_token(obj), _name(spoke, obj), _applied(obj),
            self._opts(**kwargs))
        self.registered.append(res)
        return res

    def _guard_aggregated_roles(self, spoke: str, plans: list[InstallPlan],
                                connection: dict, plugin_timeout_s: float) -> None:
        """Aggregated ClusterRoles first, each followed by its guard; the roles they
        select then depend on that guard, so uninstall deletes them first and the
        guard settles the aggregated role before it goes (aggregated_role_guard)."""
        cluster_roles = [o for p in plans for o in p.rendered.cluster_scoped]
        feeders = feeders_by_role(cluster_roles)
        if not feeders:
            return
        self._roots = [AggregatedRoleSweep(
            f"{spoke}:aggregated-clusterroles", spoke=spoke, roles=list(feeders),
            connection=connection, plugin_timeout_s=plugin_timeout_s,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self._roots))]
        for obj in cluster_roles:
            if not is_aggregated(obj):
                continue
            role = obj["metadata"]["name"]
            # The guard deletes the role and whatever the controller re-creates; a
            # delete by the provider would wait its whole timeout on a re-creation
            # (`pulumi.com/skipAwait` does not reach deletes of ClusterRoles).
            self._aggregated[role] = res = self._raw(
                spoke, obj, ignore_changes=_server_owned(obj), retain_on_delete=True,
                depends_on=self._roots)
            guard = AggregatedRoleGuard(
                f"{spoke}:{role}", spoke=spoke, role=role, connection=connection,
                plugin_timeout_s=plugin_timeout_s,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[res]))
            for feeder in feeders[role]:
                self._guards_of.setdefault(feeder, []).append(guard)

    def _install(self, spoke: str, plan: InstallPlan) -> None:
        """The plan's stages in order, each object depending on the resources of the
        stages its stage waits for. A stage without objects stands for what it waits
        for, so the order holds through it; stages that wait for nothing (the namespace)
        wait for the sweep, so every root object of the spoke is deleted before it."""
        done: dict[str, list[pulumi.Resource]] = {}
        owner: pulumi.Output[dict] | None = None
        for stage in plan.stages:
            deps = (list(dict.fromkeys(r for name in stage.after for r in done[name]))
                    if stage.after else list(self._roots))
            if stage.name == "anchor":
                (obj,) = stage.objects
                anchor = self._raw(spoke, obj, depends_on=deps)
                owner = pulumi.Output.all(anchor.id, anchor.metadata).apply(  # type: ignore[attr-defined]
                    functools.partial(_owner_reference, obj["metadata"]["name"]))
                resources: list[pulumi.Resource] = [anchor]
            elif stage.owned:
                assert owner is not None, "owned stages come after the anchor"
                resources = [self._raw(spoke, manifests.with_owner(obj, owner), depends_on=deps,
                                       ignore_changes=_server_owned(obj))
                             for obj in stage.objects]
            else:
                resources = [self._unowned(spoke, plan, stage.name, obj, deps)
                             for obj in stage.objects]
            if stage.name == "deployments":
                self.deployments.extend(resources)
            done[stage.name] = resources or deps

    def _unowned(self, spoke: str, plan: InstallPlan, stage: str, obj: dict,
                 deps: list[pulumi.Resource]) -> pulumi.Resource:
        """One object without owner, with the options its stage and kind need."""
        if stage == "namespace":
            # namespaceConfiguration applies when the namespace is created; its labels and
            # annotations are not diffed afterwards.
            return self._raw(spoke, obj, depends_on=deps,
                             ignore_changes=["metadata.labels", "metadata.annotations"])
        if stage == "crds":
            return self._raw(spoke, obj, retain_on_delete=not plan.delete_crds,
                             depends_on=deps)
        if is_aggregated(obj):
            return self._aggregated[obj["metadata"]["name"]]
        return self._raw(spoke, obj, ignore_changes=_server_owned(obj),
                         depends_on=[*deps, *self._guards_of.get(_cluster_role_name(obj), [])])


def _owner_reference(anchor_name: str, id_and_metadata: list) -> dict:
    """The anchor's live uid as the owner reference of the install's namespaced objects.
    Gated on the anchor's id: in a preview that creates the anchor, its id is unknown and
    so is the reference, while its raw `metadata` output is the input, without a uid."""
    _, metadata = id_and_metadata
    return manifests.owner_reference(anchor_name, metadata.get("uid"))


# One field manager for every stack and every reinstall: CRDs kept by an earlier
# destroy, or objects applied by another fleet stack, are adopted instead of
# failing with server-side-apply conflicts; the install's own fields win, as the
# operator's do.
APPLY_ANNOTATIONS = {
    "pulumi.com/patchFieldManager": "knative-fleet",
    "pulumi.com/patchForce": "true",
}


def _applied(obj: dict) -> dict:
    meta = dict(obj["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}), **APPLY_ANNOTATIONS}
    return {**obj, "metadata": meta}


def _skip_await(obj: dict) -> dict:
    """The provider does not wait for this object to be ready after its apply."""
    meta = dict(obj["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}),
                           manifests.SKIP_AWAIT_ANNOTATION: "true"}
    return {**obj, "metadata": meta}


def _cluster_role_name(obj: dict) -> str | None:
    return obj["metadata"]["name"] if obj["kind"] == "ClusterRole" else None


# Env vars of the PingSource adapter whose values Eventing's PingSource controller writes
# ("DO NOT MODIFY: The values below are being filled by the ping source controller" in
# the release): the operator's list (ReplicasEnvVarsTransform) and 1.21's
# K_OBSERVABILITY_CONFIG, which replaced K_METRICS_CONFIG and K_TRACING_CONFIG.
PINGSOURCE_ADAPTER = "pingsource-mt-adapter"
CONTROLLER_FILLED_ENV = frozenset({
    "K_METRICS_CONFIG", "K_LOGGING_CONFIG", "K_LEADER_ELECTION_CONFIG", "K_NO_SHUTDOWN_AFTER",
    "K_SINK_TIMEOUT", "K_TRACING_CONFIG", "K_OBSERVABILITY_CONFIG"})


def _server_owned(obj: dict) -> list[str]:
    """Fields the cluster fills in, so diffing them would show a change on every preview
    and a drift check would report the cluster's own writes: an aggregated ClusterRole's
    rules (the aggregation controller), and the PingSource adapter's replicas and
    controller-filled env values (the PingSource controller scales it from 0 when a
    PingSource exists; the operator keeps the live values on every reconcile)."""
    if obj["kind"] == "ClusterRole" and "aggregationRule" in obj:
        return ["rules"]
    if obj["kind"] == "Deployment" and obj["metadata"]["name"] == PINGSOURCE_ADAPTER:
        containers = obj["spec"]["template"]["spec"].get("containers") or []
        return ["spec.replicas", *(
            f"spec.template.spec.containers[{ci}].env[{ei}].value"
            for ci, c in enumerate(containers) for ei, e in enumerate(c.get("env") or [])
            if e.get("name") in CONTROLLER_FILLED_ENV)]
    return []

