"""The rights knative-fleet needs, derived from a stack's own plan: on a spoke, every
group, resource and verb it reads, applies and deletes, and what Kubernetes requires to
create Knative's own roles and bindings; on the hub, reading ClusterProfiles in the
inventory namespaces. Nothing here reaches a cluster.

Kubernetes refuses to create a Role or ClusterRole that grants more than its creator
holds, or a binding to such a role, unless the creator may `escalate` roles and `bind`
them; Knative's release holds ClusterRoles that aggregate other roles, so the spoke
identity gets those two verbs on (cluster)roles instead of every right Knative's
controllers hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from knative.plan import InstallPlan

# What the provider does to every object it manages: server-side apply (patch), reads
# and refreshes (get, list), awaits (watch), deletes; `create` and `update` for the
# provider's non-apply paths (a replace, a ConfigMap made mutable).
MANAGED_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
READ_VERBS = ("get", "list", "watch")
# What the provider reads while it waits for an object to be ready (a Deployment's
# ReplicaSets and Pods, a Service's endpoints, a Job's Pods), and what the planner reads
# (the install namespaces and the Deployments there, which MANAGED_VERBS covers).
AWAITED: tuple[tuple[str, str], ...] = (
    ("", "pods"), ("", "endpoints"), ("", "events"), ("", "namespaces"),
    ("", "persistentvolumeclaims"), ("apps", "replicasets"),
    ("discovery.k8s.io", "endpointslices"),
)
# What the planner's pre-checks read besides the install's own kinds: the Knative
# Operator's CRs across namespaces (a spoke it still runs is refused) and the install
# anchors, whose annotation names the stack that owns the spoke.
PRE_CHECK_READS: tuple[tuple[str, str, str], ...] = (
    ("operator.knative.dev", "knativeservings", "list"),
    ("operator.knative.dev", "knativeeventings", "list"),
    ("", "configmaps", "get"),
)
RBAC_GROUP = "rbac.authorization.k8s.io"
ESCALATION = ((RBAC_GROUP, "clusterroles"), (RBAC_GROUP, "roles"))
ESCALATION_VERBS = ("bind", "escalate")
# The hub: the ClusterProfiles groups and waves select from, and each spoke's profile.
HUB_RULE = {"apiGroups": ["multicluster.x-k8s.io"], "resources": ["clusterprofiles"],
            "verbs": ["get", "list"]}

# Plural resource names of the built-in kinds a Knative release holds; a kind the plan's
# own CRDs define takes the plural its CRD names.
BUILT_IN_PLURALS = {
    "Endpoints": "endpoints", "NetworkPolicy": "networkpolicies",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "HorizontalPodAutoscaler": "horizontalpodautoscalers",
}


@dataclass(frozen=True, slots=True, order=True)
class Right:
    """One verb on one resource of one API group."""

    api_group: str
    resource: str
    verb: str

    def __str__(self) -> str:
        return f"{self.verb} {self.resource}" + (f".{self.api_group}" if self.api_group else "")


def api_group(obj: Mapping[str, Any]) -> str:
    version = obj["apiVersion"]
    return version.split("/", 1)[0] if "/" in version else ""


def plural(kind: str) -> str:
    """Kubernetes' default plural of a kind (the one kubebuilder and the built-in kinds
    use): `Gateway` -> `gateways`, `NetworkPolicy` -> `networkpolicies`."""
    if kind in BUILT_IN_PLURALS:
        return BUILT_IN_PLURALS[kind]
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def crd_plurals(plans: Iterable[InstallPlan]) -> dict[tuple[str, str], str]:
    """{(group, kind): plural} of every kind the plans' CRDs define."""
    return {(c["spec"]["group"], c["spec"]["names"]["kind"]): c["spec"]["names"]["plural"]
            for p in plans for c in p.rendered.crds}


def required_rights(plans: Iterable[InstallPlan]) -> set[Right]:
    """Every right the spoke identity needs to install, update, check and remove the
    plans' objects, and to make the planner's pre-checks."""
    plans = list(plans)
    plurals = crd_plurals(plans)
    resources = {(api_group(o), plurals.get((api_group(o), o["kind"])) or plural(o["kind"]))
                 for p in plans for s in p.stages for o in s.objects}
    rights = {Right(g, r, v) for g, r in resources for v in MANAGED_VERBS}
    rights |= {Right(g, r, v) for g, r in AWAITED for v in READ_VERBS}
    rights |= {Right(g, r, v) for g, r, v in PRE_CHECK_READS}
    rights |= {Right(g, r, v) for g, r in ESCALATION for v in ESCALATION_VERBS}
    return rights


def policy_rules(rights: Iterable[Right]) -> list[dict[str, list[str]]]:
    """The rights as RBAC PolicyRules, one per API group and set of verbs, sorted."""
    by_group_verbs: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    per_resource: dict[tuple[str, str], set[str]] = {}
    for right in rights:
        per_resource.setdefault((right.api_group, right.resource), set()).add(right.verb)
    for (group, resource), verbs in per_resource.items():
        by_group_verbs.setdefault((group, tuple(sorted(verbs))), set()).add(resource)
    return [{"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)}
            for (group, verbs), resources in sorted(by_group_verbs.items())]


def _matches(values: Iterable[str], wanted: str) -> bool:
    values = list(values or [])
    return "*" in values or wanted in values


def granted(right: Right, rules: Iterable[Mapping[str, Any]]) -> bool:
    """Whether RBAC rules (a SelfSubjectRulesReview's resourceRules) allow the right."""
    return any(_matches(r.get("apiGroups"), right.api_group)
               and _matches(r.get("resources"), right.resource)
               and _matches(r.get("verbs"), right.verb) for r in rules)


def missing_rights(rights: Iterable[Right], rules: Iterable[Mapping[str, Any]]) -> list[Right]:
    rules = list(rules)
    return sorted(r for r in rights if not granted(r, rules))
