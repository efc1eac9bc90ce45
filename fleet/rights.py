"""The rights knative-fleet needs, derived from a stack's own plan: on a spoke, every
group, resource and verb it reads, applies and deletes, and what Kubernetes requires to
create Knative's own roles and bindings; on the hub, reading ClusterProfiles in the
inventory namespaces. Nothing here reaches a cluster.

Every write is held to the plan's names in RBAC already (`create`, `update`, `patch`,
`delete` with `resourceNames`): the provider creates by server-side apply, a PATCH to
the object's name, so the API server checks `create` with that name. Reads are on every
name: the released provider lists and watches a kind in an object's namespace while it
waits for the object's deletion, and a list names nothing. Secrets are the exception: they
are read only in the install namespaces, through the RoleBinding the plan creates in each
(knative.secret_reads), never cluster-wide.

Kubernetes refuses to create a Role or ClusterRole that grants more than its creator
holds, or a binding to such a role, unless the creator may `escalate` that role or `bind`
the role the binding names; Knative's release holds ClusterRoles that aggregate other
roles, so the spoke identity gets those two verbs instead of every right Knative's
controllers hold, and only on the names the release ships: `escalate` on its roles,
`bind` on the roles its bindings name, `create`, `update`, `patch` and `delete` on its
roles and bindings. RBAC cannot say which rules such a role may hold, whom such a
binding may name, or in which namespace a name is meant; fleet.admission_policy says it in
an admission policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.names import RBAC_GROUP
from knative.plan import InstallPlan

# What the provider does to every object it manages: server-side apply (patch), reads
# and refreshes (get, list), awaits (watch), deletes; `create` and `update` for the
# provider's non-apply paths (a replace, a ConfigMap made mutable). The writes on the
# plan's names alone.
READ_VERBS = ("get", "list", "watch")
WRITE_VERBS = ("create", "update", "patch", "delete")
MANAGED_VERBS = READ_VERBS + WRITE_VERBS
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
# What the spoke identity writes besides the plans' objects, as (group, resource,
# namespace, name): a run's hold on the spoke (ownership.hold), created by a POST (which
# names nothing), then read, renewed and finally deleted by name.
OWN_OBJECTS: tuple[tuple[str, str, str, str], ...] = (
    ("coordination.k8s.io", "leases", "kube-system", "knative-fleet-hold"),
)
# Read only in the install namespaces, through the plan's bindings (knative.secret_reads).
SECRETS = ("", "secrets")
CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
ROLE_RESOURCES = {"ClusterRole": "clusterroles", "Role": "roles"}
RBAC_RESOURCES = ("clusterroles", "roles", "clusterrolebindings", "rolebindings")
# On the release's own roles and bindings, by name: what makes, changes or removes one.
NAMED_VERBS = WRITE_VERBS
# On any role or binding: reading them.
UNNAMED_RBAC_VERBS = ("get", "list", "watch")
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
    """One verb on one resource of one API group: on every object, or on the one `name`."""

    api_group: str
    resource: str
    verb: str
    name: str = ""

    def __str__(self) -> str:
        text = f"{self.verb} {self.resource}" + (f".{self.api_group}" if self.api_group else "")
        return text + (f" named {self.name}" if self.name else "")


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


def kept_crds(plans: Iterable[InstallPlan]) -> set[str]:
    """The plans' CRD names that no plan deletes: a CRD is deleted only by a component
    whose spec sets `deleteCrdsOnDestroy` (its CRDs-first step's delete), so an identity
    whose specs keep them may not delete one (deleting a CRD deletes every custom
    resource of its kind on the spoke)."""
    plans = list(plans)
    deleted = {c["metadata"]["name"] for p in plans if p.delete_crds for c in p.rendered.crds}
    return {c["metadata"]["name"] for p in plans for c in p.rendered.crds} - deleted


def plan_objects(plans: Iterable[InstallPlan]) -> list[dict]:
    """Every object the plans apply, in their registration order."""
    return [o for p in plans for s in p.stages for o in s.objects]


def resource_of(obj: Mapping[str, Any], plurals: Mapping[tuple[str, str], str]
                ) -> tuple[str, str]:
    """(API group, plural resource) of an object; `plurals` from crd_plurals."""
    group = api_group(obj)
    return group, plurals.get((group, obj["kind"])) or plural(obj["kind"])


def rbac_rights(objects: Iterable[Mapping[str, Any]]) -> set[Right]:
    """What creating, changing and removing the objects' roles and bindings takes: any
    role or binding read; the objects' own names created, changed and deleted; their
    roles escalated; the roles their bindings name bound."""
    rights: set[Right] = set()
    for obj in objects:
        if api_group(obj) != RBAC_GROUP:
            continue
        resource, name = plural(obj["kind"]), obj["metadata"]["name"]
        rights |= {Right(RBAC_GROUP, resource, v) for v in UNNAMED_RBAC_VERBS}
        rights |= {Right(RBAC_GROUP, resource, v, name) for v in NAMED_VERBS}
        if obj["kind"] in ROLE_RESOURCES:
            rights.add(Right(RBAC_GROUP, resource, "escalate", name))
        ref = obj.get("roleRef")
        if ref and ref.get("kind") in ROLE_RESOURCES:
            rights.add(Right(RBAC_GROUP, ROLE_RESOURCES[ref["kind"]], "bind", ref["name"]))
    return rights


def required_rights(plans: Iterable[InstallPlan]) -> set[Right]:
    """Every right the spoke identity needs to install, update, check and remove the
    plans' objects, and to make the planner's pre-checks."""
    plans = list(plans)
    plurals = crd_plurals(plans)
    objects = plan_objects(plans)
    names: dict[tuple[str, str], set[str]] = {}
    for obj in objects:
        names.setdefault(resource_of(obj, plurals), set()).add(obj["metadata"]["name"])
    kept = kept_crds(plans)
    rights: set[Right] = set()
    for (group, resource), held in names.items():
        if group == RBAC_GROUP:
            continue
        rights |= {Right(group, resource, v, n) for v in WRITE_VERBS for n in held
                   if not (v == "delete" and (group, resource) == CRDS and n in kept)}
        if (group, resource) != SECRETS:
            rights |= {Right(group, resource, v) for v in READ_VERBS}
    rights |= rbac_rights(objects)
    rights |= {Right(g, r, v) for g, r in AWAITED for v in READ_VERBS}
    rights |= {Right(g, r, v) for g, r, v in PRE_CHECK_READS}
    rights |= own_rights()
    return rights


def own_rights() -> set[Right]:
    """What writing OWN_OBJECTS takes: `create` on any name (a POST names nothing; the
    admission policy holds it to their names), the rest on theirs."""
    rights = {Right(g, r, "create") for g, r, _, _ in OWN_OBJECTS}
    return rights | {Right(g, r, v, name) for g, r, _, name in OWN_OBJECTS
                     for v in ("get", "update", "delete")}


def policy_rules(rights: Iterable[Right]) -> list[dict[str, list[str]]]:
    """The rights as RBAC PolicyRules, one per API group, set of verbs and set of names,
    sorted (in a group, the rules on every name first); a named right that an unnamed
    one holds is left out."""
    rights = list(rights)
    unnamed = {(r.api_group, r.resource, r.verb) for r in rights if not r.name}
    names: dict[tuple[str, str, str], set[str]] = {}
    for right in rights:
        key = (right.api_group, right.resource, right.verb)
        if right.name and key in unnamed:
            continue
        names.setdefault(key, set())
        if right.name:
            names[key].add(right.name)
    verbs: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    for (group, resource, verb), held in names.items():
        verbs.setdefault((group, resource, tuple(sorted(held))), set()).add(verb)
    resources: dict[tuple[str, tuple[str, ...], tuple[str, ...]], set[str]] = {}
    for (group, resource, held), vs in verbs.items():
        resources.setdefault((group, tuple(sorted(vs)), held), set()).add(resource)
    rules = []
    order = sorted(resources.items(), key=lambda kv: (kv[0][0], bool(kv[0][2]), kv[0]))
    for (group, vs, held), rs in order:
        rule = {"apiGroups": [group], "resources": sorted(rs)}
        if held:
            rule["resourceNames"] = list(held)
        rules.append({**rule, "verbs": list(vs)})
    return rules


def _matches(values: Iterable[str], wanted: str) -> bool:
    values = list(values or [])
    return "*" in values or wanted in values


def _names_match(names: Iterable[str] | None, wanted: str) -> bool:
    """A rule without resourceNames holds every name; one with them only those."""
    names = list(names or [])
    return not names or (bool(wanted) and wanted in names)


def granted(right: Right, rules: Iterable[Mapping[str, Any]]) -> bool:
    """Whether RBAC rules (a SelfSubjectRulesReview's resourceRules) allow the right."""
    return any(_matches(r.get("apiGroups"), right.api_group)
               and _matches(r.get("resources"), right.resource)
               and _matches(r.get("verbs"), right.verb)
               and _names_match(r.get("resourceNames"), right.name) for r in rules)


def missing_rights(rights: Iterable[Right], rules: Iterable[Mapping[str, Any]]) -> list[Right]:
    rules = list(rules)
    return sorted(r for r in rights if not granted(r, rules))
