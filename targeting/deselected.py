"""Spokes a group managed on the last run and no longer selects.

Pulumi deletes what a successful run does not register, so a spoke that drops out
of a group would be uninstalled by the next `pulumi up`. The fleet's membership
(`components.membership`) keeps the record below in the stack state; holding the
last run's record against this run's tells which spokes dropped out and why, and
whether their group allows the uninstall (`whenDeselected: Uninstall`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from config.when_deselected import UNINSTALL
from core.reasons import REMEDIATION, Reason

if TYPE_CHECKING:  # the membership's dynamic provider loads this module: no config models
    from config.groups import FleetGroup
    from targeting.selection import Profile, SelectedSpoke


def membership_record(spokes: Iterable[SelectedSpoke], groups: Iterable[FleetGroup],
                      profiles: Iterable[Profile]) -> dict[str, Any]:
    """Plain data for the state: who is managed and by which group, each group's
    setting, and the labels of the profiles in the groups' namespaces now."""
    groups = list(groups)
    namespaces = {g.namespace for g in groups}
    return {
        "spokes": {s.entry.name: {"group": s.group or "", "profile": s.ref} for s in spokes},
        "groups": {g.name: {"namespace": g.namespace, "selector": g.selector.describe(),
                            "whenDeselected": g.when_deselected} for g in groups},
        "profiles": {p.ref: dict(p.labels) for p in profiles if p.namespace in namespaces},
    }


@dataclass(frozen=True)
class Deselection:
    spoke: str
    group: str
    why: str
    uninstall: bool

    def message(self) -> str:
        return (f"spoke {self.spoke!r}: {Reason.SPOKE_DESELECTED}: group {self.group!r} "
                f"managed it on the last run and no longer selects it: {self.why}. Nothing "
                f"on the spoke was changed. Fix: {REMEDIATION[Reason.SPOKE_DESELECTED]}")


def _labels(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "(none)"


def deselections(last: Mapping[str, Any], now: Mapping[str, Any]) -> list[Deselection]:
    """Every spoke a group managed in `last` that is managed by no one in `now`."""
    out = []
    now_spokes = now.get("spokes") or {}
    now_groups = now.get("groups") or {}
    profiles = now.get("profiles") or {}
    for spoke, was in sorted((last.get("spokes") or {}).items()):
        group = was.get("group")
        if not group or spoke in now_spokes:
            continue  # explicit entries are removed on purpose; still managed is fine
        profile = was.get("profile", "")
        if group not in now_groups:
            why = "the group was removed from knative-fleet:groups"
            setting = ((last.get("groups") or {}).get(group) or {}).get("whenDeselected")
        else:
            setting = now_groups[group].get("whenDeselected")
            namespace = now_groups[group].get("namespace")
            if profile.split("/")[0] != namespace:
                why = (f"the group now selects in namespace {namespace!r}, and its "
                       f"ClusterProfile {profile} is not there")
            elif profile not in profiles:
                why = f"ClusterProfile {profile} no longer exists on the hub"
            else:
                why = (f"the labels of ClusterProfile {profile} ({_labels(profiles[profile])}) "
                       f"no longer match the group's selector "
                       f"({now_groups[group].get('selector')})")
        out.append(Deselection(spoke, group, why, setting == UNINSTALL))
    return out
