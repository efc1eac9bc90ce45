"""The ClusterProfiles that explicit `fleet[]` entries name, with their labels.

Groups need the hub's ClusterProfiles to select at all; explicit entries do not, but
two entries that name two ClusterProfiles of one cluster (one inventory member id)
would install it twice, whatever the stack's shape. Their labels come from one list per
inventory namespace the entries use, never one request per entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from config.fleet import FleetConfig
from core.errors import ProfileError
from targeting.selection import Profile


class ProfileLister(Protocol):
    """What this reads of the inventory (access.inventory.Inventory has it)."""

    def cluster_profiles(self, namespace: str) -> list[dict]:
        ...


def entry_refs(cfg: FleetConfig) -> set[str]:
    """The ClusterProfile ("namespace/name") of every explicit entry."""
    return {f"{e.cluster_profile_ref.namespace}/{e.cluster_profile_ref.name}"
            for e in cfg.fleet}


def referenced_profiles(cfg: FleetConfig, inventory: ProfileLister,
                        listed: Iterable[str] = ()) -> list[Profile]:
    """The ClusterProfiles the explicit entries name, read from their namespaces except
    `listed` (read already). A profile that does not exist is simply not returned, and a
    namespace that cannot be listed is left out: reaching each of its spokes reads its
    ClusterProfile again and fails that spoke alone, with the reason (ClusterProfileNotFound,
    ClusterProfileUnavailable), as it always has."""
    wanted = entry_refs(cfg)
    skip = set(listed)
    namespaces = sorted({ref.split("/", 1)[0] for ref in wanted} - skip)
    found: list[Profile] = []
    for namespace in namespaces:
        try:
            objects = inventory.cluster_profiles(namespace)
        except ProfileError:
            continue
        found += [p for p in map(Profile.from_object, objects) if p.ref in wanted]
    return found
