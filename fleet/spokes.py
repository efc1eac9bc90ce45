"""One selected spoke into its SpokePlan: reach it through the inventory, plan each
component from the facts read there, check that this stack may install there (the
identity's rights, no Knative Operator CR, no other stack's owner record), and give
every object its options. Any failure is kept in the plan as the spoke's
ResolutionError (reason and fix), never raised, so the rest of the fleet converges."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kubernetes.client import ApiClient

from access import Reason, ResolutionError, ResolvedSpoke, SpokeFacts, to_kubeconfig
from access.inventory import Inventory
from access.spoke_client import connection_props
from access.spoke_facts import read_anchors, spoke_api_client
from config.fleet import FleetConfig
from core.errors import ReleaseError, TransformError
from fleet.objects import aggregated_role_guards, component_install, guards_of
from fleet.plan import OwnerGuard, SpokeInstall, SpokePlan
from fleet.rights import Right, missing_rights, policy_rules, required_rights
from fleet.spoke_identity import identity_refusal
from knative import manifests
from knative import plan as planning
from knative.plan import Stage
from ownership.errors import OwnedByAnotherStack, OwnershipError
from ownership.hold import RunHolds
from ownership.identity import StackIdentity
from ownership.records import annotations_of, as_recorded, others, records_from
from ownership.refusals import install_refusal, unknown_refusal
from rollout.waves import WavePlan
from targeting.selection import SelectedSpoke

# The namespaces the plan needs facts about: where Knative installs.
INSTALL_NAMESPACES = tuple(planning.NAMESPACE[c] for c in ("serving", "eventing"))


def cluster_identifier(profile_namespace: str, profile_name: str) -> str:
    """Stable across token rotation, new CAs and new server URLs (none of them
    replaces a resource); moving the entry to another ClusterProfile changes it,
    so the preview shows every object of the spoke being replaced."""
    return f"clusterprofile/{profile_namespace}/{profile_name}"


@dataclass(frozen=True)
class _Reached:
    resolved: ResolvedSpoke
    plans: list[planning.InstallPlan]
    owner: StackIdentity | None = None  # as the spoke's records name it


def owner_refusal(spoke: str, facts: SpokeFacts,
                  owner: StackIdentity | None) -> ResolutionError | None:
    """SpokeOwnedByAnotherStack when an anchor on the spoke records another owner than
    `owner` (ownership.records); None: no owner to check."""
    if owner is None:
        return None
    foreign = others(records_from(facts.anchors), owner)
    if not foreign:
        return None
    return ResolutionError(spoke, Reason.SPOKE_OWNED_BY_ANOTHER_STACK,
                           install_refusal(spoke, foreign, owner))


def hold_spoke(spoke: str, resolved: ResolvedSpoke, owner: StackIdentity,
               holds: RunHolds) -> ResolutionError | None:
    """Takes this run's hold on the spoke before its first write, then reads the owner
    records again under it: two runs that both found the spoke unowned cannot both
    install (ownership.hold). Any answer but a clear one fails the spoke closed."""
    def still_mine(api: ApiClient) -> None:
        foreign = others(records_from(read_anchors(api)), owner)
        if foreign:
            raise OwnedByAnotherStack(install_refusal(spoke, foreign, owner))

    try:
        holds.take(spoke, lambda: spoke_api_client(resolved.connection, resolved.credential),
                   still_mine)
    except OwnershipError as exc:
        return ResolutionError(spoke, Reason.SPOKE_OWNED_BY_ANOTHER_STACK, str(exc))
    except Exception as exc:  # noqa: BLE001 - fail closed: the spoke is not touched
        return ResolutionError(spoke, Reason.SPOKE_OWNER_UNKNOWN, unknown_refusal(
            spoke, f"{type(exc).__name__}: {exc}", "nothing on the spoke was changed"))
    return None


def operator_refusal(spoke: str, facts: SpokeFacts) -> ResolutionError | None:
    """KnativeOperatorActive while a KnativeServing or KnativeEventing is on the spoke:
    the operator would revert every apply, and uninstall on the CR's deletion."""
    if not facts.operator_crs:
        return None
    return ResolutionError(spoke, Reason.KNATIVE_OPERATOR_ACTIVE, (
        f"the Knative Operator's {', '.join(facts.operator_crs)} "
        f"{'is' if len(facts.operator_crs) == 1 else 'are'} on the spoke, so two "
        f"controllers would manage one install; nothing on the spoke was changed"))


def anchor_deleting_refusal(spoke: str, facts: SpokeFacts) -> ResolutionError | None:
    """AnchorBeingDeleted while an install's anchor is being deleted: the garbage
    collector is deleting what it owns, so a run now would find part of the install
    and restore the rest, then lose what it kept when the anchor goes."""
    if not facts.anchors_deleting:
        return None
    named = ", ".join(f"{anchor} (since {since})"
                      for anchor, since in sorted(facts.anchors_deleting.items()))
    return ResolutionError(spoke, Reason.ANCHOR_BEING_DELETED, (
        f"the install's anchor {named} is being deleted, and the garbage collector with it "
        f"deletes every object it owns; nothing on the spoke was changed"))


def unreadable_refusal(spoke: str, facts: SpokeFacts) -> ResolutionError | None:
    """SpokeAccessDenied when a pre-check's read was refused (an authorizer the rules
    review cannot speak for): whether the spoke may be installed is unknown."""
    if not facts.unreadable:
        return None
    return ResolutionError(spoke, Reason.SPOKE_ACCESS_DENIED, (
        f"its identity may not {'; '.join(facts.unreadable)}, which the checks before an "
        f"install need; nothing on the spoke was changed"))


def claimed(plans: list[planning.InstallPlan], owner: StackIdentity | None
            ) -> list[planning.InstallPlan]:
    """The plans with `owner` recorded on each anchor."""
    if owner is None:
        return plans
    return [dataclasses.replace(p, anchor=manifests.with_annotations(p.anchor,
                                                                    annotations_of(owner)))
            for p in plans]


def _reach_and_plan(spoke: SelectedSpoke, cfg: FleetConfig, inventory: Inventory,
                    owner: StackIdentity | None = None,
                    holds: RunHolds | None = None) -> _Reached | ResolutionError:
    entry = spoke.entry
    ref = entry.cluster_profile_ref
    try:
        resolved = inventory.reach(entry.name, ref.namespace, ref.name, INSTALL_NAMESPACES)
    except ResolutionError as exc:
        return exc
    facts = resolved.facts
    try:
        plans = planning.plan_spoke(entry.serving, entry.eventing, cfg.release_base,
                                    facts.namespaces, facts.installed, cfg.subject_of(entry))
    except ReleaseError as exc:
        return ResolutionError(entry.name, Reason.MANIFESTS_UNAVAILABLE, str(exc))
    except TransformError as exc:
        return ResolutionError(entry.name, Reason.INVALID_SPEC, str(exc))
    if facts.rules is not None:
        missing = missing_rights(required_rights(plans), facts.rules)
        if missing:
            return ResolutionError(entry.name, Reason.SPOKE_ACCESS_DENIED,
                                   access_denied_message(missing))
    refusal = (unreadable_refusal(entry.name, facts)
               or identity_refusal(entry.name, cfg.identity_of(entry), facts)
               or operator_refusal(entry.name, facts) or owner_refusal(entry.name, facts, owner)
               or anchor_deleting_refusal(entry.name, facts))
    if refusal is None and owner is not None and holds is not None:
        refusal = hold_spoke(entry.name, resolved, owner, holds)
    if refusal is not None:
        return refusal
    if owner is not None:
        owner = as_recorded(owner, records_from(facts.anchors))
    return _Reached(resolved, claimed(plans, owner), owner)


def access_denied_message(missing: list[Right], shown: int = 6) -> str:
    """The rights the spoke's identity lacks, and the rule that grants them."""
    names = ", ".join(str(r) for r in missing[:shown])
    more = f" and {len(missing) - shown} more" if len(missing) > shown else ""
    rules = "; ".join(
        f"apiGroups: [{', '.join(repr(g) for g in r['apiGroups'])}], "
        f"resources: [{', '.join(r['resources'])}], "
        + (f"resourceNames: [{', '.join(r['resourceNames'])}], " if "resourceNames" in r else "")
        + f"verbs: [{', '.join(r['verbs'])}]"
        for r in policy_rules(missing))
    return (f"its identity may not {names}{more}, which this install needs; nothing on "
            f"the spoke was changed. Add to its ClusterRole: {rules}")


def owner_guard(name: str, plans: list[planning.InstallPlan],
                owner: StackIdentity | None) -> OwnerGuard | None:
    """The spoke's owner guard: the anchors whose record its delete reads."""
    if owner is None:
        return None
    anchors = tuple(sorted(f"{p.anchor['metadata']['namespace']}/{p.anchor['metadata']['name']}"
                           for p in plans))
    return OwnerGuard(name=f"{name}:owner-record", owner=owner.name, owner_id=owner.id,
                      anchors=anchors)


def _install(name: str, reached: _Reached, identifier: str, gated: bool,
             plugin_timeout_s: float, owner: StackIdentity | None = None) -> SpokeInstall:
    plans = reached.plans
    feeders, guards = aggregated_role_guards(name, plans, gated)
    waits = guards_of(feeders, guards)
    connection = reached.resolved.connection
    return SpokeInstall(
        kubeconfig=to_kubeconfig(connection, name),
        identifier=identifier,
        connection=connection_props(connection),
        plugin_timeout_s=plugin_timeout_s,
        sweep_name=f"{name}:aggregated-clusterroles" if feeders else None,
        sweep_roles=tuple(feeders),
        guards=guards,
        components=tuple(component_install(name, p, gated, waits) for p in plans),
        deployments=tuple(sorted(
            f"{o['metadata']['namespace']}/{o['metadata']['name']}"
            for p in plans for s in p.stages if s.name is Stage.DEPLOYMENTS
            for o in s.objects)),
        gated=gated,
        owner_guard=owner_guard(name, plans, reached.owner or owner),
    )


def _spoke_plan(spoke: SelectedSpoke, wave: WavePlan, outcome: _Reached | ResolutionError,
               plugin_timeout_s: float, owner: StackIdentity | None = None) -> SpokePlan:
    entry = spoke.entry
    ref = entry.cluster_profile_ref
    common = {"name": entry.name, "cluster_profile": f"{ref.namespace}/{ref.name}",
              "group": spoke.group, "wave": wave.name}
    if isinstance(outcome, ResolutionError):
        return SpokePlan(**common, error=outcome)
    identifier = cluster_identifier(ref.namespace, ref.name)
    return SpokePlan(
        **common,
        connection=outcome.resolved.connection,
        server_version=outcome.resolved.server_version,
        versions={p.component: p.version for p in outcome.plans},
        install=_install(entry.name, outcome, identifier, wave.gated, plugin_timeout_s,
                         owner),
    )


def plan_spokes(cfg: FleetConfig, selected: list[SelectedSpoke], waves: list[WavePlan],
                inventory: Inventory, owner: StackIdentity | None = None,
                holds: RunHolds | None = None) -> dict[str, SpokePlan]:
    """Every selected spoke, reached side by side, in selection order. `owner`: this
    stack's identity (ownership.identity), recorded on every install and checked against
    the spoke's record; None records and checks nothing. `holds`: this run's holds, taken
    on each spoke it will change (`pulumi up`); None takes none (a preview)."""
    inventory.open()
    if not selected:
        return {}
    wave_of = {s.entry.name: w for w in waves for s in w.spokes}
    with ThreadPoolExecutor(max_workers=min(16, len(selected))) as pool:
        outcomes = list(pool.map(lambda s: _reach_and_plan(s, cfg, inventory, owner, holds),
                                 selected))
    return {s.entry.name: _spoke_plan(s, wave_of[s.entry.name], outcome,
                                      cfg.plugin_timeout_seconds, owner)
            for s, outcome in zip(selected, outcomes, strict=True)}
