"""A spoke a group managed on the last run and not on this one: found, explained, and
let go only when its group says Uninstall."""

from __future__ import annotations

from config.fleet import parse_fleet_config
from targeting.deselected import deselections, membership_record
from targeting.selection import Profile, select_spokes

NS = "fleet-system"


def record(groups: list[dict], found: list[Profile], fleet: list[dict] | None = None) -> dict:
    cfg = parse_fleet_config({"groups": groups, "fleet": fleet or []})
    return membership_record(select_spokes(cfg, found), cfg.groups, found)


def prod(**extra: object) -> dict:
    return {"name": "prod", "namespace": NS, "selector": {"matchLabels": {"env": "prod"}},
            **extra}


LAST = [Profile(NS, "a", {"env": "prod"}), Profile(NS, "b", {"env": "prod"})]


def test_nothing_dropped_nothing_reported() -> None:
    last = record([prod()], LAST)
    assert deselections(last, record([prod()], LAST)) == []
    assert deselections({}, last) == []  # the first run


def test_a_relabelled_profile_is_reported_with_its_labels_and_the_selector() -> None:
    now = [LAST[0], Profile(NS, "b", {"env": "dev"})]
    (d,) = deselections(record([prod()], LAST), record([prod()], now))
    assert (d.spoke, d.group, d.uninstall) == ("b", "prod", False)
    assert d.why == ("the labels of ClusterProfile fleet-system/b (env=dev) no longer match "
                     "the group's selector (env=prod)")
    assert d.message().startswith("spoke 'b': SpokeDeselected: group 'prod' managed it")
    assert "Nothing on the spoke was changed" in d.message()


def test_a_deleted_profile_is_reported() -> None:
    (d,) = deselections(record([prod()], LAST), record([prod()], LAST[:1]))
    assert d.why == "ClusterProfile fleet-system/b no longer exists on the hub"


def test_a_removed_group_is_reported_with_its_last_setting() -> None:
    last = record([prod(whenDeselected="Uninstall")], LAST)
    found = deselections(last, record([], LAST))
    assert [(d.spoke, d.why, d.uninstall) for d in found] == [
        ("a", "the group was removed from knative-fleet:groups", True),
        ("b", "the group was removed from knative-fleet:groups", True)]


def test_a_group_moved_to_another_namespace_is_reported() -> None:
    (d, _) = deselections(record([prod()], LAST), record([prod(namespace="other")], LAST))
    assert "the group now selects in namespace 'other'" in d.why


def test_uninstall_follows_the_groups_setting_now() -> None:
    now = record([prod(whenDeselected="Uninstall")], LAST[:1])
    (d,) = deselections(record([prod()], LAST), now)
    assert d.uninstall


def test_removing_an_explicit_entry_is_not_a_deselection() -> None:
    explicit = [{"name": "x", "clusterProfileRef": {"name": "x", "namespace": NS}}]
    last = record([prod()], LAST, explicit)
    assert deselections(last, record([prod()], LAST)) == []


def test_a_spoke_moved_to_an_explicit_entry_is_still_managed() -> None:
    explicit = [{"name": "b", "clusterProfileRef": {"name": "b", "namespace": NS}}]
    now = [LAST[0], Profile(NS, "b", {"env": "dev"})]
    assert deselections(record([prod()], LAST), record([prod()], now, explicit)) == []
