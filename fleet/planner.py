"""The fleet pipeline, Pulumi-free: the validated config and what the inventory reads
from the hub and the spokes, into one FleetPlan.

config -> targeting (which spokes) -> rollout (which wave) -> access (reach each spoke)
-> knative (plan each install) -> the plan the registrar (components/) registers.
"""

from __future__ import annotations

from access import REMEDIATION, ProfileError
from access.inventory import Inventory
from config.fleet import FleetConfig
from core.errors import SelectionError
from fleet.plan import FleetPlan
from fleet.spokes import plan_spokes
from fleet.waves import run_failure, wave_steps
from ownership.hold import RunHolds
from ownership.identity import StackIdentity
from rollout.waves import assign_waves
from targeting.deselected import membership_record
from targeting.referenced import referenced_profiles
from targeting.selection import Profile, select_spokes


class InventoryUnavailable(SelectionError):
    """The hub's ClusterProfiles cannot be listed: no spoke can be selected, and nothing
    is registered."""


def list_profiles(cfg: FleetConfig, inventory: Inventory) -> list[Profile]:
    """The ClusterProfiles groups select from, and the explicit entries' labels (their
    waves, the one-cluster check). Without waves a namespace only the entries use that
    cannot be listed fails none of the run: each of its spokes fails on its own."""
    namespaces = {g.namespace for g in cfg.groups}
    if cfg.rollout is not None:
        namespaces |= {e.cluster_profile_ref.namespace for e in cfg.fleet}
    try:
        listed = [Profile.from_object(o) for ns in sorted(namespaces)
                  for o in inventory.cluster_profiles(ns)]
        return listed + referenced_profiles(cfg, inventory, namespaces)
    except ProfileError as exc:
        raise InventoryUnavailable(
            f"cannot select the fleet's spokes: {exc}. Nothing was changed. "
            f"Fix: {REMEDIATION[exc.reason]}") from None


def plan_fleet(cfg: FleetConfig, inventory: Inventory, owner: StackIdentity | None = None,
               *, holds: RunHolds | None = None) -> FleetPlan:
    """The whole run as plain data; raises SelectionError (a ConfigError) when the
    spokes cannot be selected or ordered, before anything is registered. `owner` is the
    stack's identity (ownership.identity), read by the caller: every install records it,
    and a spoke another owner's record is on is refused. `holds`: this run's holds on the
    spokes it changes (`pulumi up`; None in a preview). The plan is the same whether or
    not the run is approved for a wave (rollout.approval)."""
    profiles = list_profiles(cfg, inventory)
    selected = select_spokes(cfg, profiles)
    membership = membership_record(selected, cfg.groups, profiles)
    waves = assign_waves(cfg, selected)
    spokes = plan_spokes(cfg, selected, waves, inventory, owner, holds)
    steps = wave_steps(waves, spokes)
    return FleetPlan(ring=cfg.ring, shows_waves=cfg.rollout is not None,
                     membership=membership, waves=steps, spokes=spokes,
                     failure=run_failure(spokes, steps))
