"""No spoke in two stacks: which clusters two or more stacks of a fleet select.

Each stack keeps its own state, so two stacks that select one cluster would each
install it, fight over its objects, and a destroy of either would uninstall it under
the other. One cluster is one ClusterProfile of a hub, and two ClusterProfiles with the
same inventory member id (multicluster.x-k8s.io/inventory-member-id) are one cluster.
Pure: {stack: what it selects} in, the overlaps and the refusal's text out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ownership.refusals import HAND_OVER
from targeting.claims import Claim
from targeting.selection import MEMBER_ID_LABEL


@dataclass(frozen=True)
class StackSelection:
    """What one stack selects on its hub (`hub`: the hub's server, "" when it selects
    nothing)."""

    hub: str
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True, order=True)
class Held:
    """One stack's claim of a cluster."""

    stack: str
    claim: Claim
    hub: str = field(default="", compare=False)


@dataclass(frozen=True)
class Overlap:
    """One cluster selected by two or more stacks: every such claim, by stack."""

    held: tuple[Held, ...]

    @property
    def stacks(self) -> list[str]:
        return sorted({h.stack for h in self.held})

    @property
    def profiles(self) -> list[str]:
        return sorted({h.claim.profile for h in self.held})

    @property
    def member_id(self) -> str | None:
        return next((h.claim.member_id for h in self.held if h.claim.member_id), None)

    def describe(self, show_hub: bool = False) -> str:
        """Lines naming the spoke, its member id, and each stack with the spoke's
        name and config path there."""
        hub = f" on hub {self.held[0].hub}" if show_hub and self.held[0].hub else ""
        member = self.member_id
        profiles = self.profiles
        if len(profiles) == 1:
            head = f"ClusterProfile {profiles[0]}{hub}"
            if member:
                head += f" (inventory member id {member!r})"
        else:
            head = (f"ClusterProfiles {_and(profiles)}{hub}, one cluster (the same "
                    f"{MEMBER_ID_LABEL}={member!r})")
        lines = [f"{head}: selected by stacks {_and(self.stacks)}"]
        for h in self.held:
            what = h.claim.profile if len(profiles) > 1 else "it"
            lines.append(f"  stack {h.stack} selects {what} as spoke {h.claim.spoke!r} "
                         f"({h.claim.where})")
        dst, src = self._pair()
        lines.append("  to move it from one stack to the other: "
                     + HAND_OVER.format(spoke=src.claim.spoke, src=src.stack, dst=dst.stack))
        return "\n".join(lines)

    def _pair(self) -> tuple[Held, Held]:
        first = self.held[0]
        second = next(h for h in self.held if h.stack != first.stack)
        return first, second


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def overlaps(selections: Mapping[str, StackSelection]) -> list[Overlap]:
    """Every cluster that claims of two or more stacks lead to, in a stable order.

    Claims are one cluster when they name the same ClusterProfile of the same hub or
    carry the same member id there (whichever links them: a profile whose labels are
    unknown still meets the same profile by name). Two claims of one stack are that
    stack's own business (its program refuses them), not an overlap."""
    held = sorted(Held(stack, claim, sel.hub) for stack, sel in selections.items()
                  for claim in sel.claims)
    parent = list(range(len(held)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of: dict[tuple[str, str, str], int] = {}
    for i, h in enumerate(held):
        for key in _keys(h):
            j = first_of.setdefault(key, i)
            parent[root(i)] = root(j)
    clusters: dict[int, list[Held]] = {}
    for i, h in enumerate(held):
        clusters.setdefault(root(i), []).append(h)
    found = [Overlap(tuple(group)) for group in clusters.values()
             if len({h.stack for h in group}) > 1]
    return sorted(found, key=lambda o: (o.profiles, o.stacks))


def _keys(h: Held) -> Iterable[tuple[str, str, str]]:
    yield (h.hub, "profile", h.claim.profile)
    if h.claim.member_id:
        yield (h.hub, "member", h.claim.member_id)


def refusal(found: list[Overlap], selections: Mapping[str, StackSelection]) -> str:
    """The whole refusal: every shared spoke with its stacks, then the fix."""
    hubs = {s.hub for s in selections.values() if s.hub}
    count = f"{len(found)} spoke{'s are' if len(found) > 1 else ' is'}"
    body = "\n".join("  " + line for o in found for line in o.describe(len(hubs) > 1)
                     .splitlines())
    return (f"refused: {count} selected by more than one stack; each of those stacks "
            "would install the spoke with its own state, and a destroy of one would "
            f"uninstall it under the other:\n{body}\n"
            "Nothing was run. Fix: give each spoke one stack: narrow one stack's group "
            "selector (e.g. a NotIn expression on a label only its own spokes carry) or "
            "remove its fleet entry; to move a spoke between stacks, use the hand-over "
            "command shown for it. See docs/runner.md, 'One stack per spoke'.")
