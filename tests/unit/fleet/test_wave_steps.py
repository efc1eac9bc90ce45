"""What a run does with its waves, decided without Pulumi: which waves start, which
spokes each batch registers, what each gate counts as failed, and why the run fails."""

from __future__ import annotations

import pytest

from access import Reason
from config.fleet import parse_fleet_config
from fleet import plan_fleet
from lab.paths import RELEASES
from tests.support.factories import FakeInventory, profile

CANARY = {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}}
PROFILES = [profile("s1", ring="canary"), profile("s2", ring="canary"),
            profile("s3", ring="main"), profile("s4", ring="main"), profile("s5", ring="main")]


def plan(rollout: dict | None, down: set[str] = frozenset()):
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": p["metadata"]["name"],
                   "clusterProfileRef": {"name": p["metadata"]["name"], "namespace": "f"}}
                  for p in PROFILES],
        **({"rollout": rollout} if rollout else {})})
    return plan_fleet(cfg, FakeInventory(
        PROFILES, broken={n: Reason.REMOTE_CLIENT_CREATION_FAILED for n in down}))


def test_without_waves_one_ungated_wave_registers_every_reached_spoke():
    (wave,) = plan(None, {"s2"}).waves
    assert (wave.name, wave.gated, wave.started, wave.stops_rollout) == ("all", False, True,
                                                                        False)
    (batch,) = wave.batches
    assert batch.spokes == ("s1", "s3", "s4", "s5")


def test_batches_of_max_parallel_each_with_its_own_gate():
    p = plan({"waves": [CANARY, {"name": "main", "maxParallel": 2}]})
    canary, main = p.waves
    assert [b.gate for b in canary.batches] == ["wave-canary"]
    assert [(b.gate, b.spokes) for b in main.batches] == [
        ("wave-main-1", ("s3", "s4")), ("wave-main-2", ("s5",))]
    assert canary.later == ("main",) and main.later == ()
    assert p.failure is None


def test_a_wave_over_its_max_failures_stops_the_rollout_after_its_reachable_spokes():
    p = plan({"waves": [CANARY, {"name": "main"}]}, {"s1"})
    canary, main = p.waves
    assert canary.started and canary.stops_rollout
    assert [b.spokes for b in canary.batches] == [("s2",)]
    # A stopped wave's unreachable spokes fail the run already: its gate does not count them.
    assert [b.unreachable for b in canary.batches] == [{}]
    assert not main.started and main.batches == ()
    assert "wave 'canary' stopped the rollout: 1 of its spokes are unreachable" in p.failure
    assert "Later waves were not started (main; spokes: s3, s4, s5)" in p.failure
    assert p.failure.startswith("1 of 5 spokes could not be resolved: s1 "
                                "(RemoteClientCreationFailed). Their resources were left "
                                "untouched; the other spokes of the waves that ran (canary) "
                                "were updated.")


@pytest.mark.parametrize("max_failures", [1, 2])
def test_within_max_failures_the_gate_counts_the_unreachable_spoke(max_failures):
    p = plan({"waves": [{**CANARY, "maxFailures": max_failures}, {"name": "main"}]}, {"s1"})
    canary, main = p.waves
    assert not canary.stops_rollout and main.started
    (batch,) = canary.batches
    assert batch.spokes == ("s2",) and set(batch.unreachable) == {"s1"}
    assert "stopped the rollout" not in p.failure
    assert "Their resources were left untouched; the other spokes were updated." in p.failure


def test_errors_and_outputs_follow_the_selection_order():
    p = plan({"waves": [{"name": "main", "selector": {"matchLabels": {"ring": "main"}}},
                        {"name": "rest"}]}, {"s5", "s1"})
    assert list(p.spokes) == ["s1", "s2", "s3", "s4", "s5"]
    assert [e.spoke for e in p.errors] == ["s1", "s5"]
    assert [s.wave for s in p.spokes.values()] == ["rest", "rest", "main", "main", "main"]


class UnlistableHub(FakeInventory):
    def cluster_profiles(self, namespace: str) -> list[dict]:
        from core.errors import ProfileError

        raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "hub said 403")


def test_a_hub_that_cannot_list_fails_the_run_before_anything_is_planned():
    from core.errors import SelectionError

    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "groups": [
        {"name": "g", "namespace": "f", "selector": {"matchLabels": {"a": "b"}}}]})
    inventory = UnlistableHub()
    with pytest.raises(SelectionError, match="cannot select the fleet's spokes: "
                       "ClusterProfileUnavailable: hub said 403. Nothing was changed. Fix: "):
        plan_fleet(cfg, inventory)
    assert inventory.reached == []


def test_explicit_entries_without_waves_list_no_profiles():
    cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}", "fleet": [
        {"name": "s1", "clusterProfileRef": {"name": "s1", "namespace": "f"}}]})
    p = plan_fleet(cfg, UnlistableHub())
    assert list(p.spokes) == ["s1"] and p.failure is None
