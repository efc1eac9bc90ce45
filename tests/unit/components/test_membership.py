"""The membership's provider: its check refuses, as Pulumi check failures, what
lifecycle.membership refuses, and only who is managed and by which group is diffed."""

from __future__ import annotations

from components import membership
from lifecycle import membership as membership_check
from targeting.deselected import Deselection


def test_membership_check_refuses_a_deselected_spoke_unless_uninstall(monkeypatch) -> None:
    provider = membership._Provider()
    found = [Deselection("b", "prod", "labels changed", uninstall=False),
             Deselection("c", "prod", "deleted", uninstall=True)]
    monkeypatch.setattr(membership_check, "deselections", lambda last, now: found)
    result = provider.check({"spokes": {}}, {"spokes": {}})
    assert [f.reason for f in result.failures] == [found[0].message()]
    assert [f.property for f in result.failures] == ["selection"]
    assert not provider.diff("m", {"spokes": {}, "profiles": {"x": {}}},
                             {"spokes": {}, "profiles": {"x": {"a": "b"}}}).changes


def test_the_membership_is_created_under_its_one_name() -> None:
    assert membership._Provider().create({"spokes": {}}).id == "fleet-membership"
