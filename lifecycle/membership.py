"""The membership's check (`components.membership` says why the record exists): the
last run's record held against this run's, in `pulumi preview` and `pulumi up`, before
any spoke changes. A spoke a group no longer selects fails it with reason
SpokeDeselected unless its group says `whenDeselected: Uninstall`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from targeting.deselected import deselections

# The input a refusal is reported on.
SELECTION = "selection"


def membership_inputs(record: Mapping[str, Any]) -> dict[str, Any]:
    """The membership's inputs: the record and a one-line summary of it, on which a
    refusal is reported; the one definition the registrar (components.membership) and
    the offline review both use."""
    spokes = record.get("spokes") or {}
    groups = sorted({s["group"] for s in spokes.values() if s.get("group")})
    summary = f"{len(spokes)} spokes" + (f", groups {', '.join(groups)}" if groups else "")
    return {**record, SELECTION: summary}


def check(last: Mapping[str, Any] | None, now: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(input, why) for each spoke this run would uninstall without its group's leave;
    empty: the run may go on."""
    return [(SELECTION, d.message()) for d in deselections(last or {}, now)
            if not d.uninstall]
