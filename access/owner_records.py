"""Whether a stack may delete its install on a spoke, from the owner records on the
install's anchors (config.stack_owner says what a record is).

`pulumi destroy` never runs the program, and an `up` that no longer registers a spoke
deletes its resources after the program ran, so the planner's check (fleet.spokes
`owner_refusal`) cannot stop either: the spoke's owner guard
(lifecycle.owner_guard) asks this module at delete time. Pure: the records come in
as plain data, a refusal goes out as the sentence the user reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.names import OWNER_ANNOTATION


def stack_of(owner: str) -> str:
    """The `organization/project/stack` part of an owner identity."""
    return owner.rsplit("@", 1)[0] if "@" in owner else owner


def _forget(spoke: str, spoke_urn: str | None) -> str:
    target = f"'{spoke_urn}'" if spoke_urn else f"<the URN of the Spoke {spoke!r}>"
    return (f"to stop managing the spoke here without deleting it, drop it from this "
            f"stack's state: pulumi state delete --target-dependents {target} (the "
            f"spoke's component with its children; the objects stay on the spoke)")


def delete_refusal(spoke: str, owner: str, records: Mapping[str, str | None],
                   spoke_urn: str | None = None) -> str | None:
    """Why the stack `owner` may not delete its install on `spoke`, or None. `records`:
    {"namespace/name" of each anchor: the owner it records, None without a record or
    without the anchor}. A record of this owner, or none, lets the delete go on (an
    install from before the records existed has none)."""
    others = {anchor: holder for anchor, holder in sorted(records.items())
              if holder not in (None, owner)}
    if not others:
        return None
    holders = sorted(set(others.values()))  # type: ignore[arg-type]
    where = ", ".join(f"ConfigMap {a}" for a in others)
    names = " and ".join(repr(h) for h in holders)
    return (f"spoke {spoke!r}: stack {names} manages this spoke now (annotation "
            f"{OWNER_ANNOTATION} on {where}); this stack is {owner!r}, and its delete would "
            f"remove what the other stack manages; nothing on the spoke was deleted. Fix: "
            f"{_forget(spoke, spoke_urn)}; or, to manage it from this stack, hand it over "
            f"first: python -m operations hand-over --spoke {spoke} --from-stack "
            f"{stack_of(holders[0])} --to-stack {stack_of(owner)}")


def unreadable_refusal(spoke: str, refused: Iterable[str],
                       spoke_urn: str | None = None) -> str | None:
    """Why the delete cannot go on when the spoke answered but refused to show an
    anchor ("namespace/name"): whose install it is cannot be told, or None."""
    refused = sorted(refused)
    if not refused:
        return None
    reads = ", ".join(f"get configmaps in {a.split('/', 1)[0]}" for a in refused)
    return (f"spoke {spoke!r}: its identity may not {reads}, so whether another stack "
            f"manages the spoke cannot be told before the delete; nothing on the spoke was "
            f"deleted. Fix: grant the identity that right, or {_forget(spoke, spoke_urn)}")
