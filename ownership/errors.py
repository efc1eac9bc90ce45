"""The ownership error tree (drawn in the package docstring), a branch of the
product's (core.errors): each `str()` is the sentence the user reads, naming the spoke,
the reason and the fix."""

from __future__ import annotations

from core.errors import FleetError


class OwnershipError(FleetError):
    """A spoke this stack may not change now."""


class OwnedByAnotherStack(OwnershipError):
    """Another stack's record is on the install."""


class HeldByAnotherRun(OwnershipError):
    """Another run holds the spoke (it is installing, or handing the spoke over)."""


class OwnerUnknown(OwnershipError):
    """The record could not be read: whose install it is cannot be told, so nothing is
    written or deleted there."""
