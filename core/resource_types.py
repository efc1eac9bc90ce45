"""The contract of the resources the program registers: their type names and, for each
dynamic resource, the inputs its provider's `diff` compares.

The registrar (components/) creates them; the offline review re-plans them without
Pulumi, and hand-over edits a stack's state by them. All three import these names from
here, so a guard gaining an input changes the review and hand-over with it. A leaf: it
imports nothing from the project.
"""

from __future__ import annotations

from dataclasses import dataclass

STACK_TYPE = "pulumi:pulumi:Stack"
# The component each spoke's objects are registered under (`knative-fleet:index:Spoke`).
SPOKE_TYPE = "knative-fleet:index:Spoke"
PROVIDER_TYPE = "pulumi:providers:kubernetes"
# What a Python dynamic resource's type is made of: this prefix and its class's name.
DYNAMIC_PREFIX = "pulumi-python:dynamic/knative-fleet:"
# The typed resources of objects a step now holds (fleet.held_typed): a CRD
# (fleet.crds_first), a ClusterRole or ClusterRoleBinding (fleet.held_rbac).
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
CLUSTER_ROLE_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
CLUSTER_ROLE_BINDING_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
# ... and a ServiceAccount, Role, RoleBinding, Service, HorizontalPodAutoscaler or
# PodDisruptionBudget (fleet.held_namespaced).
SERVICE_ACCOUNT_TYPE = "kubernetes:core/v1:ServiceAccount"
ROLE_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING_TYPE = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
SERVICE_TYPE = "kubernetes:core/v1:Service"
HPA_TYPE = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"
PDB_TYPE = "kubernetes:policy/v1:PodDisruptionBudget"
HELD_TYPES = (CRD_TYPE, CLUSTER_ROLE_TYPE, CLUSTER_ROLE_BINDING_TYPE, SERVICE_ACCOUNT_TYPE,
              ROLE_TYPE, ROLE_BINDING_TYPE, SERVICE_TYPE, HPA_TYPE, PDB_TYPE)
# What a Kubernetes provider's `DiffConfig` compares, as the offline review models it.
PROVIDER_KEYS = ("clusterIdentifier", "deleteUnreachable", "enableConfigMapMutable",
                 "enableSecretMutable", "enableServerSideApply", "kubeconfig")


@dataclass(frozen=True)
class DynamicKind:
    """One dynamic resource: its class name (the `name=` it registers with) and the
    inputs whose change its provider reports as an update."""

    name: str
    diff_keys: tuple[str, ...]

    @property
    def type(self) -> str:
        """The engine's type token, e.g. `pulumi-python:dynamic/knative-fleet:WaveGate`."""
        return DYNAMIC_PREFIX + self.name


MEMBERSHIP = DynamicKind("FleetMembership", ("spokes", "groups"))
# The membership's one resource name per stack.
MEMBERSHIP_NAME = "fleet-membership"
WAVE_GATE = DynamicKind(
    "WaveGate", ("wave", "spokes", "unreachable", "changes", "timeoutSeconds", "maxFailures"))
# In front of a wave with `approval: Required`: its step needs the approval when the
# wave's planned digest (`changes`) is not the one applied last (rollout.approval).
APPROVAL_GATE = DynamicKind("ApprovalGate", ("wave", "changes"))
AGGREGATED_ROLE_GUARD = DynamicKind(
    "AggregatedRoleGuard", ("id", "spoke", "role", "roles", "connection", "pluginTimeoutSeconds"))
AGGREGATED_ROLE_SWEEP = DynamicKind("AggregatedRoleSweep", AGGREGATED_ROLE_GUARD.diff_keys)
SPOKE_OWNER_GUARD = DynamicKind(
    "SpokeOwnerGuard",
    ("spoke", "owner", "ownerId", "anchors", "connection", "pluginTimeoutSeconds"))

# Deleted before a component's Deployments and namespaced objects: its delete removes the
# component's admission webhook configurations while their webhooks still answer.
WEBHOOKS_FIRST = DynamicKind(
    "WebhookConfigurationsFirst", ("spoke", "configurations", "connection", "pluginTimeoutSeconds"))

# Applies a component's CRDs in one step before their typed resources, which import them
# (fleet.crds_first): it applies them again when the CRDs it holds change.
CRDS_FIRST = DynamicKind("CustomResourceDefinitionsFirst", ("spoke", "crds", "digest"))

# Applies and holds a component's ClusterRoles and ClusterRoleBindings (fleet.held_rbac):
# it applies them again when the objects it holds change.
CLUSTER_RBAC = DynamicKind("ClusterRbac", ("spoke", "objects", "digest"))
# Applies and holds a component's namespaced ServiceAccounts, Roles, RoleBindings,
# Services, autoscalers and disruption budgets (fleet.held_namespaced), after its anchor.
NAMESPACED_OBJECTS = DynamicKind("NamespacedObjects", ("spoke", "objects", "digest"))

DYNAMIC_KINDS = (MEMBERSHIP, WAVE_GATE, APPROVAL_GATE, AGGREGATED_ROLE_GUARD,
                 AGGREGATED_ROLE_SWEEP, SPOKE_OWNER_GUARD, WEBHOOKS_FIRST, CRDS_FIRST,
                 CLUSTER_RBAC, NAMESPACED_OBJECTS)
