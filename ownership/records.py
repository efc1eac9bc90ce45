"""What an install's anchors record about its owner, and the one rule of whose it is.

Each anchor ConfigMap of an install carries two annotations: the owner id (`owner-id`,
ownership.identity) and the owner's name for people (`owner`). An install recorded
before ids existed carries the name alone. The rule, for a stack `me`:

- no record (no anchor, or an anchor without one: installed before records existed,
  or by the Knative Operator): nobody's, so the stack that installs takes it;
- a record with an id: `me`'s when the id is `me`'s; also when `me` has no saved id yet
  (its first run) and the record names `me` (a first run that failed before the end
  saved its id): one backend holds one stack of a name;
- a record with a name only: `me`'s when the name is `me`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.names import OWNER_ANNOTATION, OWNER_ID_ANNOTATION
from ownership.identity import StackIdentity


@dataclass(frozen=True)
class Record:
    """One anchor's owner record."""

    owner_id: str | None
    owner_name: str | None

    def __str__(self) -> str:
        if self.owner_id and self.owner_name:
            return f"{self.owner_name} (owner id {self.owner_id})"
        return str(self.owner_name or self.owner_id)


def record_of(annotations: Mapping[str, str] | None) -> Record | None:
    """The record an anchor's annotations hold, or None."""
    annotations = annotations or {}
    owner_id, name = annotations.get(OWNER_ID_ANNOTATION), annotations.get(OWNER_ANNOTATION)
    if not owner_id and not name:
        return None
    return Record(owner_id or None, name or None)


def annotations_of(me: StackIdentity) -> dict[str, str]:
    """The annotations an install of `me` carries on its anchors."""
    return {OWNER_ID_ANNOTATION: me.id, OWNER_ANNOTATION: me.name}


def is_mine(record: Record | None, me: StackIdentity) -> bool:
    """Whether `record` lets `me` change the install (the module docstring's rule)."""
    if record is None:
        return True
    if record.owner_id:
        return record.owner_id == me.id or (not me.saved and record.owner_name == me.name)
    return record.owner_name == me.name


def others(records: Mapping[str, Record | None], me: StackIdentity) -> dict[str, Record]:
    """{anchor: record} of the anchors whose record is another stack's."""
    return {anchor: rec for anchor, rec in sorted(records.items())
            if rec is not None and not is_mine(rec, me)}


def records_from(anchors: Mapping[str, Mapping[str, str] | None]) -> dict[str, Record | None]:
    """{anchor: record} from {anchor: its annotations, None when there is no anchor}."""
    return {anchor: record_of(annotations) for anchor, annotations in anchors.items()}


def as_recorded(me: StackIdentity, records: Mapping[str, Record | None]) -> StackIdentity:
    """`me` with the name its own records already carry: a record keeps the name it was
    written with while its id is `me`'s, so a state moved to another backend previews
    no change; the id is what identifies the owner, the name is for people."""
    names = sorted({r.owner_name for r in records.values()
                    if r is not None and r.owner_id == me.id and r.owner_name})
    return StackIdentity(me.id, names[0], me.saved) if len(names) == 1 else me
