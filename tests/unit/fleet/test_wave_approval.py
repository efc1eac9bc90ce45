"""A wave with `approval: Required` starts only in a run that names it in
KNATIVE_FLEET_APPROVE: without it, the waves before it run, it and every later wave do
not, and the run fails saying how to approve (so the engine deletes nothing)."""

from __future__ import annotations

import pytest

from config.fleet import parse_fleet_config
from core.errors import ConfigError
from core.settings import settings
from fleet import plan_fleet
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile

PROFILES = [profile("s1", ring="canary"), profile("s2", ring="early"),
            profile("s3", ring="main")]
WAVES = [{"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}},
         {"name": "early", "selector": {"matchLabels": {"ring": "early"}}},
         {"name": "main", "approval": "Required"}]


def plan(approved: frozenset[str] = frozenset(), waves: list[dict] = WAVES):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"}}
                  for p in PROFILES],
        "rollout": {"waves": waves}})
    return plan_fleet(cfg, FakeInventory(PROFILES), approved=approved)


def test_without_approval_the_run_stops_before_the_wave_and_says_how_to_approve():
    p = plan()
    canary, early, main = p.waves
    assert canary.started and early.started
    assert [b.spokes for b in early.batches] == [("s2",)]
    assert not main.started and main.waiting_approval and main.batches == ()
    assert p.failure == (
        "wave 'main' waits for approval: it and the waves after it were not started "
        "(main; spokes: s3); their objects are as they were. To approve, run again with "
        "KNATIVE_FLEET_APPROVE=main (or python -m runner up --approve main).")


def test_an_approved_wave_starts_and_the_run_succeeds():
    p = plan(frozenset({"main"}))
    assert all(w.started and not w.waiting_approval for w in p.waves)
    assert [b.spokes for b in p.waves[2].batches] == [("s3",)]
    assert p.failure is None


def test_the_waves_after_a_waiting_wave_do_not_start_even_if_approved():
    waves = [{**WAVES[0]}, {**WAVES[1], "approval": "Required"}, {"name": "main",
                                                                  "approval": "Required"}]
    canary, early, main = plan(frozenset({"main"}), waves).waves
    assert canary.started and early.waiting_approval
    assert not main.started and not main.waiting_approval


def test_approving_another_wave_does_not_start_this_one():
    assert plan(frozenset({"early", "mian"})).waves[2].waiting_approval


def test_approve_is_a_comma_separated_list_of_wave_names():
    assert settings({"KNATIVE_FLEET_APPROVE": " main, early ,"}).approved_waves == {
        "main", "early"}
    assert settings({}).approved_waves == frozenset()


def test_approval_accepts_only_required_or_none():
    with pytest.raises(ConfigError, match="approval"):
        parse_fleet_config({"rollout": {"waves": [{"name": "a", "approval": "yes"}]}})
