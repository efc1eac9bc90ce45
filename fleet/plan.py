"""The fleet plan: everything one run registers, as plain data.

The planner (fleet.planner) builds it from the validated config and what it reads from
the hub and the spokes; the registrar (components/) turns it into Pulumi resources and
decides nothing of its own. Every object carries the options Pulumi needs for it, so
which fields the cluster owns, what is kept on delete or what waits for what is said
once, here, in plain data a unit test can read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from access import ResolutionError, SpokeConnection
from knative.crd_defaults import with_defaults
from knative.plan import Stage


class Role(StrEnum):
    """How the registrar treats one planned object."""

    PLAIN = "plain"
    # The install's anchor: its live uid becomes the owner of the owned objects after it.
    ANCHOR = "anchor"
    # An aggregated ClusterRole registered before the stages (with its guard); its place
    # in a stage stands for that resource.
    AGGREGATED = "aggregated"


@dataclass(frozen=True, slots=True)
class PlannedObject:
    """One Kubernetes object of a spoke with its Pulumi options."""

    name: str  # the resource name: "<spoke>:<namespace>/<name>" or "<spoke>:<name>"
    type_token: str  # pulumi-kubernetes type token, e.g. "kubernetes:apps/v1:Deployment"
    body: dict[str, Any]  # the object as applied (apply annotations included)
    role: Role = Role.PLAIN
    owned: bool = False  # gets the anchor's ownerReference when registered
    retain_on_delete: bool | None = None
    ignore_changes: tuple[str, ...] | None = None  # fields the cluster owns
    guards: tuple[str, ...] = ()  # aggregated roles whose guard this object waits for
    # What the API server fills in that `body` leaves out (knative.crd_defaults), applied
    # and held with it, as an earlier release's typed CRD holds it; kept apart
    # from `body` so a wave's digest (rollout.approval) is the release's objects alone.
    server_defaults: dict[str, Any] | None = None

    @property
    def object_name(self) -> str:
        return self.body["metadata"]["name"]

    @property
    def registered_body(self) -> dict[str, Any]:
        """The body as registered and applied: with the server's defaults, if any."""
        if not self.server_defaults:
            return self.body
        return with_defaults(self.body, self.server_defaults)


@dataclass(frozen=True, slots=True)
class PlannedStage:
    """One step of a component's registration order (knative.plan.Stage)."""

    stage: Stage
    after: tuple[Stage, ...]  # every object waits for every object of these stages
    objects: tuple[PlannedObject, ...]
    # The spoke is ready once these objects are (the provider waits for Deployments).
    readiness: bool = False


@dataclass(frozen=True, slots=True)
class ComponentInstall:
    """Serving or Eventing on one spoke, in registration order."""

    component: str
    version: str
    stages: tuple[PlannedStage, ...]
    # The resource that removes the component's webhook configurations first on uninstall
    # (components.webhooks_first), with "Kind/name" of each; None: the component has none.
    webhooks_first: str | None = None
    webhook_configurations: tuple[str, ...] = ()
    # The resource that applies the component's CRDs before their typed resources
    # (fleet.crds_first, components.crds_first); None: the component has no CRDs.
    crds_first: str | None = None
    # The resource that applies the component's ClusterRoles and ClusterRoleBindings
    # (fleet.held_rbac, components.held_objects); None: the component has none to hold.
    cluster_rbac: str | None = None
    # The resource that applies the component's ServiceAccounts, Roles, RoleBindings,
    # Services, autoscalers and disruption budgets (fleet.held_namespaced,
    # components.held_objects); None: the component has none to hold.
    namespaced_objects: str | None = None


@dataclass(frozen=True, slots=True)
class AggregatedRoleGuard:
    """The guard registered after one aggregated ClusterRole (components.aggregated_role_guard
    says why): deleted after the role's feeders, before the role."""

    name: str
    role: PlannedObject


@dataclass(frozen=True, slots=True)
class OwnerGuard:
    """The check registered after everything of a spoke (components.owner_guard says
    why): deleted first, it stops the install's delete while another stack's owner
    record is on its anchors."""

    name: str
    owner: str  # this stack's owner name (ownership.identity)
    owner_id: str  # and its id
    anchors: tuple[str, ...]  # "namespace/name" of each component's anchor ConfigMap


@dataclass(frozen=True, slots=True)
class SpokeInstall:
    """Everything registered on one reached spoke."""

    kubeconfig: dict[str, Any]
    identifier: str  # the provider's cluster identifier
    connection: dict[str, Any]  # how a dynamic resource reaches the spoke, no credential
    plugin_timeout_s: float
    sweep_name: str | None  # the aggregated-role sweep, when the install has aggregated roles
    sweep_roles: tuple[str, ...]
    guards: tuple[AggregatedRoleGuard, ...]
    components: tuple[ComponentInstall, ...]
    deployments: tuple[str, ...]  # "namespace/name" of the Deployments a wave gate awaits
    gated: bool  # a wave gate, not the provider, waits for the Deployments
    owner_guard: OwnerGuard | None = None  # None: the plan has no owner to record


@dataclass(frozen=True)
class SpokePlan:
    """One selected spoke: where it stands in the fleet, and its install or why not."""

    name: str
    cluster_profile: str  # "namespace/name"
    group: str | None
    wave: str
    connection: SpokeConnection | None = None
    server_version: str | None = None
    versions: dict[str, str] = field(default_factory=dict)  # component -> version
    install: SpokeInstall | None = None
    error: ResolutionError | None = None

    @property
    def condition(self) -> dict[str, str]:
        """The operator's TargetClusterResolved condition for this spoke."""
        if self.error is not None:
            return {"status": "False", "reason": str(self.error.reason),
                    "message": self.error.message}
        assert self.connection is not None
        return {"status": "True", "reason": "Resolved",
                "message": f"reached {self.connection.server} ({self.server_version})"}


@dataclass(frozen=True, slots=True)
class BatchStep:
    """Spokes of a wave registered together, then awaited by one gate (when gated)."""

    gate: str  # the gate's resource name
    spokes: tuple[str, ...]  # the batch's spokes that are registered (reached)
    unreachable: dict[str, str]  # what the gate counts as failed besides its spokes


@dataclass(frozen=True, slots=True)
class ApprovalStep:
    """The approval gate in front of a wave (components.approval_gate)."""

    gate: str  # its resource name
    changes: str  # the digest of the wave's planned installs
    spokes: tuple[str, ...]  # the wave's reached spokes


@dataclass(frozen=True)
class WaveStep:
    """One wave of this run: its spokes, its batches and whether it runs at all."""

    name: str
    index: int
    spokes: tuple[str, ...]  # every spoke of the wave, reached or not
    gated: bool
    timeout_s: int
    max_failures: int
    later: tuple[str, ...]  # the waves after it
    started: bool
    unreachable: dict[str, str]  # spoke -> why it is not reached
    batches: tuple[BatchStep, ...]
    # `approval: Required`: the name of the gate in front of the wave and the digest of
    # what its reached spokes are planned to run (rollout.approval); None otherwise.
    approval: ApprovalStep | None = None

    @property
    def stops_rollout(self) -> bool:
        """More unreachable spokes than the wave allows: the waves after it do not start
        (the implicit wave of a stack without waves has none after it)."""
        return self.gated and len(self.unreachable) > self.max_failures


@dataclass(frozen=True)
class FleetPlan:
    """The whole run: the membership record, the waves in order and every spoke."""

    ring: int
    shows_waves: bool  # the stack has `rollout`: outputs name each spoke's wave
    membership: dict[str, Any]
    waves: tuple[WaveStep, ...]
    spokes: dict[str, SpokePlan]  # in the order the outputs list them
    failure: str | None  # why the run must fail after registering, if it must

    @property
    def errors(self) -> list[ResolutionError]:
        return [s.error for s in self.spokes.values() if s.error is not None]
