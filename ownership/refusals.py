"""The sentences a user reads when a spoke is not this stack's to change: one per place
the rule is asked (the planner before an install, the owner guard before a delete,
hand-over before a move), each naming the spoke, who owns it, and the way on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.names import OWNER_ID_ANNOTATION
from ownership.identity import StackIdentity, stack_of
from ownership.records import Record

# The hand-over command every refusal and the runner's overlap check name.
HAND_OVER = "python -m operations hand-over --spoke {spoke} --from-stack {src} --to-stack {dst}"


def _owners(others: Mapping[str, Record]) -> tuple[str, str, list[Record]]:
    holders = sorted(set(others.values()), key=str)
    where = ", ".join(f"ConfigMap {a}" for a in others)
    names = " and ".join(repr(str(h)) for h in holders)
    return where, names, holders


def hand_over_command(spoke: str, owner: Record, me: StackIdentity) -> str:
    return HAND_OVER.format(spoke=spoke, src=stack_of(owner.owner_name or "<owner stack>"),
                            dst=me.stack)


def forget_command(spoke: str, spoke_urn: str | None) -> str:
    target = f"'{spoke_urn}'" if spoke_urn else f"<the URN of the Spoke {spoke!r}>"
    return (f"pulumi state delete --target-dependents {target} (the spoke's component with "
            f"its children; the objects stay on the spoke)")


def install_refusal(spoke: str, others: Mapping[str, Record], me: StackIdentity) -> str:
    """Before an install: another stack's record is on the spoke."""
    where, names, holders = _owners(others)
    return (f"stack {names} manages this spoke (annotation {OWNER_ID_ANNOTATION} on "
            f"{where}); this stack is {me}; nothing on the spoke was changed. To move it "
            f"here: {hand_over_command(spoke, holders[0], me)}")


def delete_refusal(spoke: str, others: Mapping[str, Record], me: StackIdentity,
                   spoke_urn: str | None = None) -> str:
    """Before a delete: another stack's record is on the install."""
    where, names, holders = _owners(others)
    return (f"spoke {spoke!r}: stack {names} manages this spoke now (annotation "
            f"{OWNER_ID_ANNOTATION} on {where}); this stack is {me}, and its delete would "
            f"remove what the other stack manages; nothing on the spoke was deleted. Fix: to "
            f"stop managing the spoke here without deleting it, drop it from this stack's "
            f"state: {forget_command(spoke, spoke_urn)}; or, to manage it from this stack, "
            f"hand it over first: {hand_over_command(spoke, holders[0], me)}")


def unreadable_refusal(spoke: str, refused: Iterable[str],
                       spoke_urn: str | None = None) -> str | None:
    """Before a delete: the spoke answered but refused to show an anchor."""
    refused = sorted(refused)
    if not refused:
        return None
    reads = ", ".join(f"get configmaps in {a.split('/', 1)[0]}" for a in refused)
    return (f"spoke {spoke!r}: its identity may not {reads}, so whether another stack "
            f"manages the spoke cannot be told before the delete; nothing on the spoke was "
            f"deleted. Fix: grant the identity that right, or, for a spoke this stack should "
            f"forget, {forget_command(spoke, spoke_urn)}")


def unknown_refusal(spoke: str, error: str, doing: str, spoke_urn: str | None = None) -> str:
    """Anywhere: the record could not be read (an API error other than NotFound, a
    timeout, a spoke that does not answer), so the spoke is left as it is."""
    return (f"spoke {spoke!r}: its owner record could not be read ({error}), so whose "
            f"install it is cannot be told; {doing}. Fix: run again once the spoke's API "
            f"server answers; for a spoke that is gone for good, "
            f"{forget_command(spoke, spoke_urn)} (docs/troubleshooting.md, 'A spoke that "
            f"is gone for good')")


def hand_over_refusal(spoke: str, others: Mapping[str, Record], source: StackIdentity) -> str:
    """Before a move: the record names neither the stack moved from nor the one moved to."""
    where, names, _ = _owners(others)
    return (f"spoke {spoke!r}: its owner record names stack {names} ({where}), not "
            f"{source.stack}; nothing was changed. Fix: hand it over from the stack its "
            f"record names (--from-stack), or check that --spoke names the spoke you mean")
