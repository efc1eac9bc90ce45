"""The RBAC a stack's identities need, as YAML ready to apply: on each spoke a
ValidatingAdmissionPolicy and its binding (fleet.admission_policy: every object the
identity writes or deletes is one the plan names, and what it writes is the plan's), then
a ClusterRole with exactly the rights the stack's plan needs (fleet.rights) and its
binding; on the hub a Role in each inventory namespace the stack reads ClusterProfiles
from, and its binding. The policy comes first, so the identity never holds the role
without it.

Derived from the stack's specs alone, before any spoke is reached: every spec of the
stack (its entries and its groups) is planned as if on an empty spoke, so the role and
the policy cover a first install as well as every later run. Several configs (a stack's
before and after a change that removes objects, or two stacks handing a spoke over)
give one role and one policy that hold all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from config.fleet import FleetConfig
from fleet.admission_policy import policy_documents
from fleet.rights import (
    HUB_RULE,
    RBAC_GROUP,
    Right,
    crd_plurals,
    plan_objects,
    policy_rules,
    required_rights,
)
from knative import plan as planning
from knative.plan import InstallPlan

SPOKE_ROLE = "knative-fleet-spoke"
HUB_ROLE = "knative-fleet-hub"


def stack_plans(cfg: FleetConfig) -> list[InstallPlan]:
    """A plan of every spec of the stack (its entries and its groups), as on an empty
    spoke."""
    specs = [(e.serving, e.eventing) for e in cfg.fleet]
    specs += [(g.serving, g.eventing) for g in cfg.groups]
    return [plan for serving, eventing in specs
            for plan in planning.plan_spoke(serving, eventing, cfg.release_base, {})]


def spoke_rights(cfg: FleetConfig) -> set[Right]:
    """Every right any spoke of the stack needs, whichever spec it gets."""
    return required_rights(stack_plans(cfg))


def inventory_namespaces(cfg: FleetConfig) -> list[str]:
    """Where the stack reads ClusterProfiles: its groups' and its entries' namespaces."""
    return sorted({g.namespace for g in cfg.groups}
                  | {e.cluster_profile_ref.namespace for e in cfg.fleet})


def subject(text: str) -> dict[str, str]:
    """`ServiceAccount:NAMESPACE/NAME`, `User:NAME` or `Group:NAME` as an RBAC subject."""
    kind, _, name = text.partition(":")
    if kind == "ServiceAccount":
        namespace, _, account = name.partition("/")
        if not namespace or not account:
            raise ValueError(f"{text!r}: a ServiceAccount is ServiceAccount:NAMESPACE/NAME")
        return {"kind": kind, "name": account, "namespace": namespace}
    if kind in ("User", "Group") and name:
        return {"kind": kind, "name": name, "apiGroup": RBAC_GROUP}
    raise ValueError(f"{text!r}: give ServiceAccount:NAMESPACE/NAME, User:NAME or Group:NAME")


def _binding(kind: str, name: str, role_kind: str, who: dict[str, str],
             namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/part-of": "knative-fleet"}}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": name},
            "subjects": [who]}


def _configs(cfg: FleetConfig | Iterable[FleetConfig]) -> list[FleetConfig]:
    return [cfg] if isinstance(cfg, FleetConfig) else list(cfg)


def spoke_documents(cfg: FleetConfig | Iterable[FleetConfig], who: dict[str, str],
                    name: str = SPOKE_ROLE) -> list[dict[str, Any]]:
    """The spoke's admission policy and its binding, then its ClusterRole and binding (all
    four `name`), for the identity the access provider issues credentials for; for
    several configs, one set that holds all of them."""
    return spoke_documents_of([p for c in _configs(cfg) for p in stack_plans(c)], who, name)


def spoke_documents_of(plans: Iterable[InstallPlan], who: dict[str, str],
                       name: str = SPOKE_ROLE) -> list[dict[str, Any]]:
    """spoke_documents from the plans themselves."""
    plans = list(plans)
    objects = plan_objects(plans)
    taken = {o["metadata"]["name"] for o in objects
             if o["kind"] in ("ClusterRole", "ClusterRoleBinding")}
    if name in taken:
        raise ValueError(f"{name!r} names a ClusterRole or ClusterRoleBinding of the release; "
                         "give the identity's role another name (--spoke-role)")
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name,
                         "labels": {"app.kubernetes.io/part-of": "knative-fleet"}},
            "rules": policy_rules(required_rights(plans))}
    return [*policy_documents(name, who, objects, crd_plurals(plans)), role,
            _binding("ClusterRoleBinding", name, "ClusterRole", who)]


def hub_documents(cfg: FleetConfig | Iterable[FleetConfig], who: dict[str, str],
                  name: str = HUB_ROLE) -> list[dict[str, Any]]:
    """A Role and its binding (both `name`) in each inventory namespace of the stack."""
    namespaces = sorted({ns for c in _configs(cfg) for ns in inventory_namespaces(c)})
    docs: list[dict[str, Any]] = []
    for namespace in namespaces:
        docs.append({"apiVersion": f"{RBAC_GROUP}/v1", "kind": "Role",
                     "metadata": {"name": name, "namespace": namespace,
                                  "labels": {"app.kubernetes.io/part-of": "knative-fleet"}},
                     "rules": [HUB_RULE]})
        docs.append(_binding("RoleBinding", name, "Role", who, namespace))
    return docs
