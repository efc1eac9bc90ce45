"""What one stack selects, as plain data another stack's selection is held against.

Each stack checks its own selection (targeting.selection); no stack sees the others.
The fleet runner reads every stack's claims with the same selection code and refuses
a run in which two stacks claim one cluster (runner.overlap).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from config.fleet import FleetConfig
from targeting.selection import MEMBER_ID_LABEL, Profile, group_matches


@dataclass(frozen=True, order=True)
class Claim:
    """One ClusterProfile a stack selects: the spoke it becomes, and from where."""

    profile: str  # "namespace/name"
    spoke: str
    where: str  # its config path: `fleet[1]`, `groups[0] ('eu')`
    member_id: str | None = None  # multicluster.x-k8s.io/inventory-member-id, when known


def claims(cfg: FleetConfig, profiles: Iterable[Profile]) -> list[Claim]:
    """Every ClusterProfile the stack selects: each explicit entry's clusterProfileRef
    (whether or not it exists), then each profile a group matches, once.

    The stack's own conflicts (two groups on one profile, one name twice, ...) are not
    checked here: a stack whose selection is refused still claims what it names."""
    by_ref = {p.ref: p for p in profiles}

    def member(ref: str) -> str | None:
        profile = by_ref.get(ref)
        return (profile.labels.get(MEMBER_ID_LABEL) or None) if profile else None

    out: list[Claim] = []
    for i, entry in enumerate(cfg.fleet):
        ref = f"{entry.cluster_profile_ref.namespace}/{entry.cluster_profile_ref.name}"
        out.append(Claim(ref, entry.name, f"fleet[{i}]", member(ref)))
    explicit = {c.profile for c in out}
    for ref, indexes in sorted(group_matches(cfg, by_ref).items()):
        if ref in explicit:
            continue  # the explicit entry's spec replaces the groups'
        i = indexes[0]
        out.append(Claim(ref, by_ref[ref].name, f"groups[{i}] ({cfg.groups[i].name!r})",
                         member(ref)))
    return out
