"""The membership's check: a spoke a group no longer selects refuses the run unless its
group allows the uninstall; the refusal is plain data, (input, why)."""

from __future__ import annotations

from lifecycle import membership
from targeting.deselected import Deselection


def test_a_deselected_spoke_refuses_the_run_unless_its_group_allows_it(monkeypatch) -> None:
    found = [Deselection("b", "prod", "labels changed", uninstall=False),
             Deselection("c", "prod", "deleted", uninstall=True)]
    seen: list[tuple] = []

    def deselections(last, now):
        seen.append((last, now))
        return found

    monkeypatch.setattr(membership, "deselections", deselections)
    assert membership.check(None, {"spokes": {}}) == [("selection", found[0].message())]
    assert seen == [({}, {"spokes": {}})]  # no state yet: nothing was managed


def test_a_run_that_deselects_nothing_goes_on() -> None:
    record = {"spokes": {"a": {"group": "prod"}}, "groups": {"prod": {}}}
    assert membership.check(record, record) == []
