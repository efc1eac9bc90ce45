"""Groups and explicit entries, held against the hub's ClusterProfiles, become the
fleet's spokes: one name, one spec and one ClusterProfile each.

An explicit `fleet[]` entry for a ClusterProfile a group also selects replaces the
group's spec for that spoke as a whole (no merge: what the entry says is exactly
what runs, as with a CR of its own). Every conflict the hub's data creates is a
`SelectionError` listing each problem with its config path, before anything runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from config.fleet import ClusterProfileRef, FleetConfig, FleetEntry
from core.errors import SelectionError
from core.strict import DNS_LABEL

# Two ClusterProfiles with the same value are the same cluster (Cluster Inventory API).
MEMBER_ID_LABEL = "multicluster.x-k8s.io/inventory-member-id"


@dataclass(frozen=True)
class Profile:
    """What selection needs of a ClusterProfile: where it is and its labels."""

    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_object(cls, obj: Mapping) -> Profile:
        meta = obj.get("metadata") or {}
        return cls(meta.get("namespace", ""), meta.get("name", ""),
                   dict(meta.get("labels") or {}))


@dataclass(frozen=True)
class SelectedSpoke:
    """One spoke of the fleet; `group` is None for an explicit `fleet[]` entry."""

    entry: FleetEntry
    group: str | None
    labels: Mapping[str, str]

    @property
    def ref(self) -> str:
        ref = self.entry.cluster_profile_ref
        return f"{ref.namespace}/{ref.name}"

    @property
    def source(self) -> str:
        return f"group {self.group!r}" if self.group else "an explicit fleet entry"


def _index(profiles: Iterable[Profile]) -> dict[str, Profile]:
    return {p.ref: p for p in profiles}


def group_matches(cfg: FleetConfig, by_ref: Mapping[str, Profile]) -> dict[str, list[int]]:
    """{profile ref: the indexes of the groups whose selector matches it}."""
    chosen: dict[str, list[int]] = {}
    for i, group in enumerate(cfg.groups):
        for profile in sorted(by_ref.values(), key=lambda p: p.ref):
            if profile.namespace == group.namespace and group.selector.matches(profile.labels):
                chosen.setdefault(profile.ref, []).append(i)
    return chosen


def select_spokes(cfg: FleetConfig, profiles: Iterable[Profile]) -> list[SelectedSpoke]:
    """Explicit entries first, in config order, then each group's matches by name."""
    by_ref = _index(profiles)
    problems: list[str] = []
    spokes: list[SelectedSpoke] = []
    explicit: dict[str, str] = {}
    for entry in cfg.fleet:
        ref = f"{entry.cluster_profile_ref.namespace}/{entry.cluster_profile_ref.name}"
        explicit[ref] = entry.name
        labels = by_ref[ref].labels if ref in by_ref else {}
        spokes.append(SelectedSpoke(entry, None, labels))

    chosen = group_matches(cfg, by_ref)
    for ref, indexes in sorted(chosen.items()):
        profile = by_ref[ref]
        if ref in explicit:
            continue  # the explicit entry's spec replaces the groups'
        if len(indexes) > 1:
            names = " and ".join(f"groups[{i}] ({cfg.groups[i].name!r})" for i in indexes)
            problems.append(
                f"{names}: both select ClusterProfile {ref}; a spoke takes one spec. Narrow "
                "one selector (e.g. a NotIn or DoesNotExist expression) or give the spoke an "
                "explicit fleet entry, which then replaces both groups' specs")
            continue
        i = indexes[0]
        group = cfg.groups[i]
        if not DNS_LABEL.match(profile.name):
            problems.append(
                f"groups[{i}] ({group.name!r}): ClusterProfile {ref} cannot name a spoke "
                "(not a DNS-1123 label); give it an explicit fleet entry with a name")
            continue
        entry = FleetEntry.model_construct(
            name=profile.name,
            cluster_profile_ref=ClusterProfileRef(namespace=profile.namespace,
                                                  name=profile.name),
            serving=group.serving, eventing=group.eventing,
            spoke_identity=group.spoke_identity)
        spokes.append(SelectedSpoke(entry, group.name, profile.labels))

    problems += _name_collisions(spokes, cfg) + _same_cluster(spokes, cfg)
    if problems:
        raise SelectionError(
            "the fleet's groups and entries do not fit the ClusterProfiles on the hub:\n"
            + "\n".join(f"  {p}" for p in problems)
            + "\nNothing was changed. Fix the groups (knative-fleet:groups) or the fleet "
            "entries (knative-fleet:fleet) as each line says; see README 'Groups and waves'.")
    return spokes


def _where(spoke: SelectedSpoke, cfg: FleetConfig) -> str:
    if spoke.group is None:
        i = next(i for i, e in enumerate(cfg.fleet) if e.name == spoke.entry.name)
        return f"fleet[{i}]"
    i = next(i for i, g in enumerate(cfg.groups) if g.name == spoke.group)
    return f"groups[{i}] ({spoke.group!r})"


def _name_collisions(spokes: list[SelectedSpoke], cfg: FleetConfig) -> list[str]:
    problems = []
    first: dict[str, SelectedSpoke] = {}
    for spoke in spokes:
        name = spoke.entry.name
        other = first.setdefault(name, spoke)
        if other is not spoke and other.ref != spoke.ref:
            problems.append(
                f"{_where(spoke, cfg)}: spoke name {name!r} of ClusterProfile {spoke.ref} is "
                f"already the name of ClusterProfile {other.ref} ({_where(other, cfg)}); "
                "spoke names must be unique across inventory namespaces: give one of them "
                "an explicit fleet entry with another name")
    return problems


def _same_cluster(spokes: list[SelectedSpoke], cfg: FleetConfig) -> list[str]:
    problems = []
    first: dict[str, SelectedSpoke] = {}
    for spoke in spokes:
        member = spoke.labels.get(MEMBER_ID_LABEL)
        if not member:
            continue
        other = first.setdefault(member, spoke)
        if other is not spoke:
            problems.append(
                f"{_where(spoke, cfg)}: ClusterProfiles {other.ref} ({_where(other, cfg)}) and "
                f"{spoke.ref} carry the same {MEMBER_ID_LABEL}={member!r}: they are the same "
                f"cluster and would get two installs; select only one of them: "
                f"{_one_of(other, spoke)}")
    return problems


def _one_of(first: SelectedSpoke, second: SelectedSpoke) -> str:
    if first.group is None and second.group is None:
        return "remove one of the two fleet entries"
    if first.group is not None and second.group is not None:
        return ("narrow a group's selector (e.g. a NotIn expression on a label only one of "
                "the two carries)")
    return ("remove the fleet entry, or narrow the group's selector (e.g. a NotIn "
            "expression on a label only one of the two carries)")
