"""The RBAC a stack's identities need, as YAML ready to apply: on each spoke a ClusterRole
with exactly the rights the stack's plan needs (fleet.rights) and its binding; on the hub
a Role in each inventory namespace the stack reads ClusterProfiles from, and its binding.

Derived from the stack's specs alone, before any spoke is reached: every spec of the
stack (its entries and its groups) is planned as if on an empty spoke, so the role
covers a first install as well as every later run.
"""

from __future__ import annotations

from typing import Any

from config.fleet import FleetConfig
from fleet.rights import HUB_RULE, RBAC_GROUP, Right, policy_rules, required_rights
from knative import plan as planning

SPOKE_ROLE = "knative-fleet-spoke"
HUB_ROLE = "knative-fleet-hub"


def spoke_rights(cfg: FleetConfig) -> set[Right]:
    """Every right any spoke of the stack needs, whichever spec it gets."""
    specs = [(e.serving, e.eventing) for e in cfg.fleet]
    specs += [(g.serving, g.eventing) for g in cfg.groups]
    rights: set[Right] = set()
    for serving, eventing in specs:
        rights |= required_rights(planning.plan_spoke(serving, eventing, cfg.release_base, {}))
    return rights


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


def spoke_documents(cfg: FleetConfig, who: dict[str, str],
                    name: str = SPOKE_ROLE) -> list[dict[str, Any]]:
    """The spoke's ClusterRole and its binding (both `name`) to the identity the access
    provider issues credentials for."""
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": name,
                         "labels": {"app.kubernetes.io/part-of": "knative-fleet"}},
            "rules": policy_rules(spoke_rights(cfg))}
    return [role, _binding("ClusterRoleBinding", name, "ClusterRole", who)]


def hub_documents(cfg: FleetConfig, who: dict[str, str],
                  name: str = HUB_ROLE) -> list[dict[str, Any]]:
    """A Role and its binding (both `name`) in each inventory namespace of the stack."""
    docs: list[dict[str, Any]] = []
    for namespace in inventory_namespaces(cfg):
        docs.append({"apiVersion": f"{RBAC_GROUP}/v1", "kind": "Role",
                     "metadata": {"name": name, "namespace": namespace,
                                  "labels": {"app.kubernetes.io/part-of": "knative-fleet"}},
                     "rules": [HUB_RULE]})
        docs.append(_binding("RoleBinding", name, "Role", who, namespace))
    return docs
