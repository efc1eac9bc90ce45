"""The fewest resources a resource must depend on to be deleted before every one of a set.

Pulumi deletes a resource only after everything that depends on it, so depending on the
set's last dependents (the members nothing else of the set depends on) orders a resource
before the whole set, and created after it, as depending on every member would. The
state keeps each dependency as a URN of about 150 bytes: the spoke's owner guard, which
must be deleted first, once named every resource of its spoke (about 30 kB a spoke)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def last_dependents(members: Sequence[T], depends_on: Callable[[T], Iterable[T]]) -> list[T]:
    """The members of `members` (in their order, each once) that no other member depends
    on; `depends_on(m)` is what `m` depends on directly. Every member is one of them or
    a dependency, directly or through other members, of one of them."""
    unique = list(dict.fromkeys(members))
    inside = set(unique)
    depended = {d for m in unique for d in depends_on(m) if d in inside and d is not m}
    return [m for m in unique if m not in depended]
