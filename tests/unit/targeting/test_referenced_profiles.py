"""The one-cluster check (one inventory member id, two ClusterProfiles) for every stack
shape: explicit entries read their profiles' labels with one list per namespace, a
missing profile still fails its own spoke only, and what a stack claims for the runner."""

from __future__ import annotations

import pytest

from access import Reason
from config.fleet import FleetConfig, parse_fleet_config
from core.errors import ProfileError, SelectionError
from fleet import plan_fleet
from lab.paths import RELEASES
from targeting.claims import Claim, claims
from targeting.referenced import referenced_profiles
from targeting.selection import MEMBER_ID_LABEL, Profile
from tests.support.factories import FakeInventory, profile


class CountingInventory(FakeInventory):
    """Records each namespace listed; `unlistable` namespaces answer ProfileError."""

    def __init__(self, *args, unlistable: set[str] = frozenset(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.listed: list[str] = []
        self.unlistable = unlistable

    def cluster_profiles(self, namespace: str) -> list[dict]:
        self.listed.append(namespace)
        if namespace in self.unlistable:
            raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "hub said 403")
        return super().cluster_profiles(namespace)


def member(name: str, member_id: str, namespace: str = "f", **labels: str) -> dict:
    return profile(name, namespace, **{MEMBER_ID_LABEL: member_id}, **labels)


def entry(name: str, ref: str, namespace: str = "f") -> dict:
    return {"name": name, "clusterProfileRef": {"name": ref, "namespace": namespace}}


def config(fleet: list[dict], **extra: object) -> FleetConfig:
    return parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": fleet, **extra})


def test_an_explicit_only_stack_with_two_profiles_of_one_cluster_is_refused() -> None:
    cfg = config([entry("eu-1", "a"), entry("eu-1-again", "b"), entry("us-1", "c")])
    inventory = CountingInventory([member("a", "m1"), member("b", "m1"), member("c", "m2")])
    with pytest.raises(SelectionError) as err:
        plan_fleet(cfg, inventory)
    text = str(err.value)
    assert "fleet[1]: ClusterProfiles f/a (fleet[0]) and f/b carry the same " \
           f"{MEMBER_ID_LABEL}='m1': they are the same cluster and would get two " \
           "installs; select only one of them: remove one of the two fleet entries" in text
    assert "f/c" not in text
    assert "Nothing was changed" in text
    assert inventory.reached == []  # refused before any spoke is reached
    assert inventory.listed == ["f"]  # one list for the namespace, not one get per entry


def test_one_list_per_namespace_the_entries_use() -> None:
    cfg = config([entry("a", "a"), entry("b", "b"), entry("c", "c", "g")])
    inventory = CountingInventory([profile("a"), profile("b"), profile("c", "g")])
    plan_fleet(cfg, inventory)
    assert sorted(inventory.listed) == ["f", "g"]


def test_a_namespace_a_group_lists_already_is_not_listed_again() -> None:
    cfg = config([entry("x", "a")], groups=[
        {"name": "g", "namespace": "f", "selector": {"matchLabels": {"env": "prod"}}}])
    inventory = CountingInventory([member("a", "m1"), member("b", "m1", env="prod")])
    with pytest.raises(SelectionError, match=r"groups\[0\] \('g'\): ClusterProfiles f/a "
                       r"\(fleet\[0\]\) and f/b carry the same .*remove the fleet entry, or "
                       "narrow the group's selector"):
        plan_fleet(cfg, inventory)
    assert inventory.listed == ["f"]


def test_a_missing_profile_still_fails_its_own_spoke_only() -> None:
    cfg = config([entry("eu-1", "a"), entry("gone", "no-such-profile"), entry("eu-2", "b")])
    inventory = CountingInventory(
        [member("a", "m1"), member("b", "m2")],
        broken={"no-such-profile": Reason.CLUSTER_PROFILE_NOT_FOUND})
    p = plan_fleet(cfg, inventory)
    assert [(e.spoke, e.reason) for e in p.errors] == [("gone", Reason.CLUSTER_PROFILE_NOT_FOUND)]
    assert p.spokes["eu-1"].install is not None and p.spokes["eu-2"].install is not None


def test_a_missing_profile_does_not_hide_two_others_of_one_cluster() -> None:
    cfg = config([entry("gone", "no-such-profile"), entry("a", "a"), entry("b", "b")])
    with pytest.raises(SelectionError, match=r"fleet\[2\]: ClusterProfiles f/a \(fleet\[1\]\) "
                                             "and f/b carry the same"):
        plan_fleet(cfg, CountingInventory([member("a", "m1"), member("b", "m1")]))


def test_a_namespace_that_cannot_be_listed_fails_its_spokes_not_the_run() -> None:
    cfg = config([entry("a", "a"), entry("b", "b", "g")])
    inventory = CountingInventory([profile("a"), profile("b", "g")], unlistable={"g"},
                                  broken={"b": Reason.CLUSTER_PROFILE_UNAVAILABLE})
    p = plan_fleet(cfg, inventory)
    assert [(e.spoke, e.reason) for e in p.errors] == [("b", Reason.CLUSTER_PROFILE_UNAVAILABLE)]
    assert sorted(inventory.listed) == ["f", "g"]


def test_referenced_profiles_returns_only_the_named_ones() -> None:
    cfg = config([entry("a", "a")])
    inventory = CountingInventory([member("a", "m1"), member("z", "m1")])
    assert referenced_profiles(cfg, inventory) == [Profile("f", "a", {MEMBER_ID_LABEL: "m1"})]
    assert referenced_profiles(cfg, inventory, listed={"f"}) == []


def test_claims_are_every_entry_and_every_group_match_once() -> None:
    cfg = config([entry("alpha", "a"), entry("gone", "missing")], groups=[
        {"name": "prod", "namespace": "f", "selector": {"matchLabels": {"env": "prod"}}},
        {"name": "all", "namespace": "f", "selector": {}}])
    found = [Profile.from_object(p) for p in
             (member("a", "m1", env="prod"), member("b", "m2", env="prod"), profile("c"))]
    assert claims(cfg, found) == [
        Claim("f/a", "alpha", "fleet[0]", "m1"),
        Claim("f/missing", "gone", "fleet[1]", None),
        Claim("f/b", "b", "groups[0] ('prod')", "m2"),
        Claim("f/c", "c", "groups[1] ('all')", None),
    ]
