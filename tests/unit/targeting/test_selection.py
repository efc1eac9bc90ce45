"""Groups and explicit entries against the hub's ClusterProfiles: who is selected, who
overrides whom, and every conflict as a config error with its path."""

from __future__ import annotations

import pytest

from config.fleet import FleetConfig, parse_fleet_config
from core.errors import ConfigError, SelectionError
from targeting.selection import MEMBER_ID_LABEL, Profile, select_spokes

NS = "fleet-system"


def cfg(groups: list[dict], fleet: list[dict] | None = None) -> FleetConfig:
    return parse_fleet_config({"groups": groups, "fleet": fleet or []})


def group(name: str, labels: dict, namespace: str = NS, **extra: object) -> dict:
    return {"name": name, "namespace": namespace, "selector": {"matchLabels": labels},
            "serving": {"version": "1.23"}, **extra}


def profiles(*specs: tuple[str, dict], namespace: str = NS) -> list[Profile]:
    return [Profile(namespace, name, labels) for name, labels in specs]


def test_a_group_selects_by_label_within_its_namespace() -> None:
    found = profiles(("a", {"env": "prod"}), ("b", {"env": "dev"}), ("c", {"env": "prod"}))
    other = profiles(("d", {"env": "prod"}), namespace="elsewhere")
    spokes = select_spokes(cfg([group("prod", {"env": "prod"})]), found + other)
    assert [(s.entry.name, s.group, s.ref) for s in spokes] == [
        ("a", "prod", f"{NS}/a"), ("c", "prod", f"{NS}/c")]
    assert spokes[0].entry.serving is not None and spokes[0].entry.eventing is None


def test_no_match_selects_nothing() -> None:
    assert select_spokes(cfg([group("prod", {"env": "prod"})]),
                         profiles(("a", {"env": "dev"}))) == []


def test_an_explicit_entry_replaces_the_group_spec_for_its_spoke() -> None:
    explicit = {"name": "alpha", "clusterProfileRef": {"name": "a", "namespace": NS},
                "eventing": {"version": "1.22"}}
    spokes = select_spokes(cfg([group("prod", {"env": "prod"})], [explicit]),
                           profiles(("a", {"env": "prod"}), ("b", {"env": "prod"})))
    by_name = {s.entry.name: s for s in spokes}
    assert set(by_name) == {"alpha", "b"}
    assert by_name["alpha"].group is None
    assert by_name["alpha"].entry.serving is None  # whole-spec replacement, no merge
    assert by_name["alpha"].labels == {"env": "prod"}


def test_a_spoke_selected_by_two_groups_names_both() -> None:
    c = cfg([group("prod", {"env": "prod"}), group("eu", {"region": "eu"})])
    with pytest.raises(SelectionError) as err:
        select_spokes(c, profiles(("a", {"env": "prod", "region": "eu"})))
    assert "groups[0] ('prod') and groups[1] ('eu'): both select ClusterProfile " \
           "fleet-system/a" in str(err.value)
    assert isinstance(err.value, ConfigError)


def test_the_same_name_in_two_namespaces_collides() -> None:
    c = cfg([group("one", {"env": "prod"}), group("two", {"env": "prod"}, namespace="ns2")])
    found = profiles(("a", {"env": "prod"})) + profiles(("a", {"env": "prod"}), namespace="ns2")
    with pytest.raises(SelectionError) as err:
        select_spokes(c, found)
    text = str(err.value)
    assert "groups[1] ('two'): spoke name 'a' of ClusterProfile ns2/a is already the name " \
           "of ClusterProfile fleet-system/a (groups[0] ('one'))" in text


def test_a_profile_name_that_is_not_a_dns_label_is_refused() -> None:
    with pytest.raises(SelectionError, match=r"ClusterProfile fleet-system/eu\.prod cannot name"):
        select_spokes(cfg([group("prod", {})]), profiles(("eu.prod", {})))


def test_two_profiles_of_one_member_id_are_one_cluster() -> None:
    found = profiles(("a", {MEMBER_ID_LABEL: "m1"}), ("b", {MEMBER_ID_LABEL: "m1"}),
                     ("c", {MEMBER_ID_LABEL: "m2"}))
    with pytest.raises(SelectionError) as err:
        select_spokes(cfg([group("all", {})]), found)
    text = str(err.value)
    assert "ClusterProfiles fleet-system/a (groups[0] ('all')) and fleet-system/b carry the " \
           f"same {MEMBER_ID_LABEL}='m1'" in text
    assert "/c" not in text


def test_an_explicit_entry_naming_a_group_spoke_of_another_profile_collides() -> None:
    explicit = {"name": "b", "clusterProfileRef": {"name": "x", "namespace": "ns2"}}
    with pytest.raises(SelectionError, match=r"groups\[0\] \('all'\): spoke name 'b'"):
        select_spokes(cfg([group("all", {})], [explicit]), profiles(("b", {})))


@pytest.mark.parametrize(("raw", "path"), [
    ({"groups": [{"name": "Bad_Name", "namespace": NS, "selector": {}}]}, "groups[0].name"),
    ({"groups": [{"name": "g", "namespace": NS}]}, "groups[0].selector"),
    ({"groups": [{"name": "g", "namespace": NS, "selector": {}, "whenDeselected": "Keep"}]},
     "groups[0].whenDeselected"),
    ({"groups": [{"name": "g", "namespace": NS, "selector": {"matchLabel": {}}}]},
     "groups[0].selector.matchLabel"),
    ({"groups": [{"name": "g", "namespace": NS, "selector": {}},
                 {"name": "g", "namespace": NS, "selector": {}}]},
     "groups[1].name: 'g' is already used by groups[0]"),
])
def test_group_config_errors_name_their_path(raw: dict, path: str) -> None:
    with pytest.raises(ConfigError, match=path.replace("[", r"\[").replace("]", r"\]")):
        parse_fleet_config(raw)
