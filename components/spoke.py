"""One ComponentResource per spoke: the registrar of a planned install (fleet.plan). It
wires every planned object to the spoke's pulumi-kubernetes Provider with the options the
plan gives it, in the plan's stage order; it decides nothing about Knative itself."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

import pulumi
import pulumi_kubernetes as k8s

from components.aggregated_role_guard import AggregatedRoleGuard, AggregatedRoleSweep
from components.crds_first import CustomResourceDefinitionsFirst
from components.held_objects import ClusterRbac, NamespacedObjects
from components.owner_guard import SpokeOwnerGuard
from components.release_object import ReleaseObject
from components.webhooks_first import WebhookConfigurationsFirst
from core.last_dependents import last_dependents
from core.resource_types import SPOKE_TYPE
from fleet import crds_first, held_namespaced, held_rbac
from fleet.held_typed import typed_key
from fleet.plan import ComponentInstall, PlannedObject, Role, SpokeInstall
from knative import manifests
from knative.plan import Stage
from knative.server_owned import WEBHOOK_CONFIGURATIONS
from lifecycle import aggregated_roles, owner_guard, webhooks_first

# Kinds whose pods run as a ServiceAccount of the install (held by its namespaced-objects
# step: fleet.held_namespaced).
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})


class Spoke(pulumi.ComponentResource):
    """Knative on one spoke: its provider, the aggregated-role guards, each component's
    stages, and last the owner guard."""

    deployments: list[pulumi.Resource]
    registered: list[pulumi.Resource]
    # each component's CRDs-first and cluster-RBAC steps: a wave gate digests them
    held_steps: list[pulumi.Resource]
    # how many typed resources of held objects the state held and this run registers
    # once more, kept on delete (fleet.held_typed)
    typed_registered: int
    ready: pulumi.Output[bool]

    def __init__(
        self,
        name: str,
        install: SpokeInstall,
        *,
        delete_unreachable: bool = False,
        after: list[pulumi.Resource] | None = None,
        on_recorded: Callable[[str], None] | None = None,
        typed_held: frozenset[str] = frozenset(),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`after`: what every resource of the spoke waits for (the fleet membership and,
        in a rollout, the gate of the wave before). `on_recorded(name)` runs once every
        anchor of the install is applied: the install then records this stack.
        `typed_held`: the typed resources of objects a step now holds (CRDs, cluster
        RBAC) that the state would delete (fleet.held_typed), registered once more, kept
        on delete."""
        super().__init__(SPOKE_TYPE, name, None, opts)
        after = list(after or [])
        self.provider = k8s.Provider(
            name,
            kubeconfig=pulumi.Output.secret(json.dumps(install.kubeconfig, sort_keys=True)),
            cluster_identifier=install.identifier,
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
        self._removers: list[pulumi.Resource] = []
        self._held: list[pulumi.Resource] = []
        self.held_steps = []
        self.typed_registered = 0
        # What each resource of the spoke depends on (components.spoke: _depending).
        self._depends: dict[pulumi.Resource, list[pulumi.Resource]] = {}
        self._spoke_name = name
        self._spoke_install = install
        self._typed_held = typed_held
        self._anchors: list[pulumi.Resource] = []
        roots = self._guard_aggregated_roles(name, install, after)
        for component in install.components:
            self._install(component, roots)
        if on_recorded is not None and self._anchors:
            pulumi.Output.all(*[a.id for a in self._anchors]).apply(
                lambda _: on_recorded(name))
        self._guard_owner(name, install, opts)
        self.ready = (
            pulumi.Output.all(*[d.id for d in self.deployments]).apply(lambda _: True)
            if self.deployments else pulumi.Output.from_input(True)
        )
        self.register_outputs({"ready": self.ready})

    def _register(self, obj: PlannedObject, body: dict,
                  depends_on: list[pulumi.Resource],
                  retain_on_delete: bool | None = None) -> ReleaseObject:
        opts = pulumi.ResourceOptions(
            parent=self, provider=self.provider, depends_on=depends_on,
            ignore_changes=list(obj.ignore_changes) if obj.ignore_changes is not None else None,
            retain_on_delete=obj.retain_on_delete if retain_on_delete is None
            else retain_on_delete)
        res = ReleaseObject(obj.type_token, obj.name, body, opts)
        self._depends[res] = depends_on
        self.registered.append(res)
        return res

    def _depending(self, members: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """What a resource that must be deleted before every one of `members` (and created
        after them) depends on: their last dependents (core.last_dependents)."""
        return last_dependents(members, lambda r: self._depends.get(r, ()))

    def _guard_aggregated_roles(self, spoke: str, install: SpokeInstall,
                                after: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """The sweep, then each aggregated ClusterRole followed by its guard (see
        components.aggregated_role_guard); returns what the stages without a stage
        before them wait for, so every root object is deleted before the sweep."""
        self._aggregated: dict[str, pulumi.Resource] = {}
        self._guards: dict[str, pulumi.Resource] = {}
        self._sweep: list[pulumi.Resource] = []
        if install.sweep_name is None:
            return after
        roots: list[pulumi.Resource] = [AggregatedRoleSweep(
            install.sweep_name,
            inputs=aggregated_roles.sweep_inputs(install, spoke, install.connection),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after))]
        self._sweep = roots
        for guard in install.guards:
            role = guard.role.object_name
            self._aggregated[role] = res = self._register(guard.role, guard.role.body, roots)
            self._guards[role] = role_guard = AggregatedRoleGuard(
                guard.name,
                inputs=aggregated_roles.guard_inputs(guard, spoke, install.connection,
                                                     install.plugin_timeout_s),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[res]))
            self._depends[role_guard] = [res]
        return roots

    def _guard_owner(self, spoke: str, install: SpokeInstall,
                     opts: pulumi.ResourceOptions | None) -> None:
        """The owner guard (components.owner_guard), depending on every resource of the
        spoke, through their last dependents and the provider, so that Pulumi deletes it
        first, and nothing of the spoke while its delete fails. Not in `registered`: a
        wave gate does not wait for it. Its refusal names this component's URN, built
        from plain strings: `self.urn` as an input would make the guard depend on the
        component, so on every child, itself included."""
        guard = install.owner_guard
        if guard is None:
            return
        top_level = opts is None or opts.parent is None
        everything = [self.provider, *self._depending([
            *self._sweep, *self._guards.values(), *self.registered, *self._removers,
            *self._held])]
        SpokeOwnerGuard(
            guard.name,
            inputs=owner_guard.guard_inputs(
                guard, spoke, pulumi.create_urn(spoke, SPOKE_TYPE) if top_level else None,
                install.connection, install.plugin_timeout_s),
            opts=pulumi.ResourceOptions(parent=self, depends_on=everything))

    def _install(self, component: ComponentInstall, roots: list[pulumi.Resource]) -> None:
        """The stages in order, each object depending on the resources of the stages its
        stage waits for. A stage without objects stands for what it waits for, so the
        order holds through it."""
        done: dict[Stage, list[pulumi.Resource]] = {}
        owner: pulumi.Output[dict] | None = None
        configurations: list[pulumi.Resource] = []
        # The namespaced-objects step, which the workloads wait for (their ServiceAccounts).
        accounts: list[pulumi.Resource] = []
        for stage in component.stages:
            deps = (list(dict.fromkeys(r for s in stage.after for r in done[s]))
                    if stage.after else list(roots))
            if stage.stage is Stage.CRDS and component.crds_first is not None:
                step = self._apply_crds_first(component, deps)
                self._typed(stage.objects, step)
                done[stage.stage] = [step]
                continue
            resources: list[pulumi.Resource] = []
            objects = stage.objects
            if stage.stage is Stage.CLUSTER and component.cluster_rbac is not None:
                held = [o for o in objects if held_rbac.is_held(stage.stage, o)]
                step = self._apply_cluster_rbac(component, held, deps)
                self._typed(tuple(held), step)
                resources.append(step)
                objects = tuple(o for o in objects if not held_rbac.is_held(stage.stage, o))
            if stage.stage is Stage.NAMESPACED and component.namespaced_objects is not None:
                assert owner is not None, "owned objects come after the anchor"
                held = [o for o in objects if held_namespaced.is_held(stage.stage, o)]
                step = self._apply_namespaced(component, owner, deps)
                self._typed(tuple(held), step, owner)
                resources.append(step)
                accounts = [step]
                objects = tuple(o for o in objects
                                if not held_namespaced.is_held(stage.stage, o))
            for obj in objects:
                if obj.role is Role.AGGREGATED:
                    resources.append(self._aggregated[obj.object_name])
                    continue
                if obj.owned:
                    assert owner is not None, "owned objects come after the anchor"
                    body = manifests.with_owner(obj.registered_body, owner)
                else:
                    body = obj.registered_body
                # A workload's pods need their ServiceAccount: one the engine started
                # first would wait its whole timeout while it holds one of the engine's
                # parallel slots the step may need.
                waits = accounts if obj.body["kind"] in WORKLOAD_KINDS else []
                res = self._register(obj, body, [*deps, *waits,
                                                 *(self._guards[r] for r in obj.guards)])
                if obj.body["kind"] in WEBHOOK_CONFIGURATIONS:
                    configurations.append(res)
                if obj.role is Role.ANCHOR:
                    self._anchors.append(res)
                    owner = pulumi.Output.all(res.id, res.metadata).apply(  # type: ignore[attr-defined]
                        functools.partial(_owner_reference, obj.object_name))
                resources.append(res)
            if stage.readiness:
                self.deployments.extend(resources)
            done[stage.stage] = resources or deps
        if component.webhooks_first is not None:
            self._webhooks_first(component, [
                *configurations, *done.get(Stage.NAMESPACED, []),
                *done.get(Stage.DEPLOYMENTS, [])])

    def _apply_crds_first(self, component: ComponentInstall,
                          after: list[pulumi.Resource]) -> pulumi.Resource:
        """The component's CRDs-first step (components.crds_first), after what the CRDs
        stage waits for; the typed CRDs wait for it."""
        install = self._spoke_install
        assert component.crds_first is not None
        return self._holding_step(CustomResourceDefinitionsFirst, component.crds_first,
                                  crds_first.step_inputs(component, self._spoke_name,
                                                         install.connection,
                                                         install.plugin_timeout_s), after)

    def _apply_cluster_rbac(self, component: ComponentInstall, held: list[PlannedObject],
                            after: list[pulumi.Resource]) -> pulumi.Resource:
        """The component's cluster-RBAC step (components.held_rbac), after what the
        cluster stage waits for and the guards of the aggregated roles its roles feed."""
        install = self._spoke_install
        assert component.cluster_rbac is not None
        after = [*after, *dict.fromkeys(self._guards[r] for o in held for r in o.guards)]
        return self._holding_step(ClusterRbac, component.cluster_rbac,
                                  held_rbac.step_inputs(component, self._spoke_name,
                                                        install.connection,
                                                        install.plugin_timeout_s), after)

    def _apply_namespaced(self, component: ComponentInstall, owner: pulumi.Output[dict],
                          after: list[pulumi.Resource]) -> pulumi.Resource:
        """The component's namespaced-objects step (components.held_objects), after the
        anchor, its bodies owned by the anchor's live uid (an output)."""
        install = self._spoke_install
        assert component.namespaced_objects is not None
        inputs = owner.apply(lambda ref: held_namespaced.step_inputs(
            component, self._spoke_name, install.connection, install.plugin_timeout_s, ref))
        return self._holding_step(NamespacedObjects, component.namespaced_objects,
                                  {k: inputs[k] for k in held_namespaced.INPUTS}, after)

    def _holding_step(self, cls: Callable[..., pulumi.Resource], name: str, inputs: dict,
                      after: list[pulumi.Resource]) -> pulumi.Resource:
        """A step that applies and holds objects (a CRDs-first or cluster-RBAC step).
        Not in `registered`: that holds the Kubernetes objects a wave gate digests (it
        digests the step's own digest: `held_steps`)."""
        step = cls(name, inputs, pulumi.ResourceOptions(parent=self, depends_on=after))
        self._depends[step] = after
        self._held.append(step)
        self.held_steps.append(step)
        return step

    def _typed(self, objects: tuple[PlannedObject, ...], step: pulumi.Resource,
               owner: pulumi.Output[dict] | None = None) -> None:
        """The typed resources of `objects` (held by `step`) the state holds and would
        delete (fleet.held_typed), as they were (an owned one with the anchor's owner
        reference, `owner`), now kept on delete: the next run lets them go. Not in
        `registered`, as the step is not."""
        for obj in objects:
            if typed_key(obj.type_token, obj.name) in self._typed_held:
                body = (manifests.with_owner(obj.registered_body, owner)
                        if obj.owned and owner is not None else obj.registered_body)
                self._register(obj, body, [step], retain_on_delete=True)
                self._held.append(self.registered.pop())
                self.typed_registered += 1

    def _webhooks_first(self, component: ComponentInstall,
                        after: list[pulumi.Resource]) -> None:
        """The component's webhook configurations' remover, after them, its Deployments
        and namespaced objects, so deleted before all of those (components.webhooks_first).
        Not in `registered`: that holds the Kubernetes objects a wave gate digests. It
        depends on their last dependents only (the others are deleted after those)."""
        install = self._spoke_install
        assert component.webhooks_first is not None
        after = self._depending(after)
        remover = WebhookConfigurationsFirst(
            component.webhooks_first,
            inputs=webhooks_first.step_inputs(component, self._spoke_name, install.connection,
                                              install.plugin_timeout_s),
            opts=pulumi.ResourceOptions(parent=self, depends_on=after))
        self._depends[remover] = after
        self._removers.append(remover)


def _owner_reference(anchor_name: str, id_and_metadata: list) -> dict:
    """The anchor's live uid as the owner reference of the install's namespaced objects.
    Gated on the anchor's id: in a preview that creates the anchor, its id is unknown and
    so is the reference, while its raw `metadata` output is the input, without a uid."""
    _, metadata = id_and_metadata
    return manifests.owner_reference(anchor_name, metadata.get("uid"))
