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
from config.identity import DEFAULT_SPOKE_IDENTITY
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


def stack_plans(cfg: FleetConfig, identity: str | None = None) -> list[InstallPlan]:
    """A plan of every spec of the stack (its entries and its groups), as on an empty
    spoke; with `identity`, of the specs whose spokes' credentials are for it alone."""
    specs = [*cfg.fleet, *cfg.groups]
    return [plan for spec in specs if identity is None or cfg.identity_of(spec) == identity
            for plan in planning.plan_spoke(spec.serving, spec.eventing, cfg.release_base, {},
                                            identity=cfg.subject_of(spec))]


def identities(cfg: FleetConfig) -> set[str]:
    """Who the stack's spokes' credentials are for: its specs' identities (the stack's
    own when it has none)."""
    return {cfg.identity_of(s) for s in [*cfg.fleet, *cfg.groups]} or {cfg.spoke_identity}


def spoke_rights(cfg: FleetConfig) -> set[Right]:
    """Every right any spoke of the stack needs, whichever spec it gets."""
    return required_rights(stack_plans(cfg))


def inventory_namespaces(cfg: FleetConfig) -> list[str]:
    """Where the stack reads ClusterProfiles: its groups' and its entries' namespaces."""
    return sorted({g.namespace for g in cfg.groups}
                  | {e.cluster_profile_ref.namespace for e in cfg.fleet})


def spoke_identity(configs: Iterable[FleetConfig], given: str | None) -> str:
    """The identity the spoke rights are printed for: the one the stacks' plans bind
    Secret reads to (`spokeIdentity`); with several, `given` (--spoke-subject) picks one,
    and the rights hold the specs of that identity's spokes alone."""
    named = sorted(set().union(*(identities(c) for c in configs)) or {DEFAULT_SPOKE_IDENTITY})
    if given is None:
        if len(named) > 1:
            raise ValueError(
                f"the stack's spokes are reached as {len(named)} identities "
                f"({', '.join(named)}); print the rights of each with --spoke-subject")
        return named[0]
    if given not in named:
        raise ValueError(
            f"--spoke-subject {given} is not an identity the stack's plan binds Secret reads "
            f"to ({', '.join(named)}); set knative-fleet:spokeIdentity: {given} in the "
            "stack file (or on the entries and groups it reaches), or leave it out")
    return given


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
                    name: str = SPOKE_ROLE, identity: str | None = None
                    ) -> list[dict[str, Any]]:
    """The spoke's admission policy and its binding, then its ClusterRole and binding (all
    four `name`), for the identity the access provider issues credentials for; for
    several configs, one set that holds all of them. With `identity`,
    of the specs whose spokes are reached as it alone (access_roles.spoke_identity)."""
    return spoke_documents_of([p for c in _configs(cfg) for p in stack_plans(c, identity)],
                              who, name)


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
