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
from rollout.waves import assign_waves
from targeting.deselected import membership_record
from targeting.selection import Profile, select_spokes


class InventoryUnavailable(SelectionError):
    """The hub's ClusterProfiles cannot be listed: no spoke can be selected, and nothing
    is registered."""


def list_profiles(cfg: FleetConfig, inventory: Inventory) -> list[Profile]:
    """The ClusterProfiles groups select from, and (for waves) the explicit entries'
    labels; nothing is listed for a stack of explicit entries without waves."""
    namespaces = {g.namespace for g in cfg.groups}
    if cfg.rollout is not None:
        namespaces |= {e.cluster_profile_ref.namespace for e in cfg.fleet}
    try:
        return [Profile.from_object(o) for ns in sorted(namespaces)
                for o in inventory.cluster_profiles(ns)]
    except ProfileError as exc:
        raise InventoryUnavailable(
            f"cannot select the fleet's spokes: {exc}. Nothing was changed. "
            f"Fix: {REMEDIATION[exc.reason]}") from None


def plan_fleet(cfg: FleetConfig, inventory: Inventory) -> FleetPlan:
    """The whole run as plain data; raises SelectionError (a ConfigError) when the
    spokes cannot be selected or ordered, before anything is registered."""
    profiles = list_profiles(cfg, inventory)
    selected = select_spokes(cfg, profiles)
    membership = membership_record(selected, cfg.groups, profiles)
    waves = assign_waves(cfg, selected)
    spokes = plan_spokes(cfg, selected, waves, inventory)
    steps = wave_steps(waves, spokes)
    return FleetPlan(ring=cfg.ring, shows_waves=cfg.rollout is not None,
                     membership=membership, waves=steps, spokes=spokes,
                     failure=run_failure(spokes, steps))
