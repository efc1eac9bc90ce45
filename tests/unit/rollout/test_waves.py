"""Spokes into waves (first match wins, the last may take the rest) and waves into
batches; the rollout's own config errors name their path."""

from __future__ import annotations

import pytest

from config.fleet import parse_fleet_config
from core.errors import ConfigError, SelectionError
from rollout.waves import ALL, assign_waves
from targeting.selection import Profile, select_spokes

NS = "fleet-system"
RINGS = {"a": "canary", "b": "main", "c": "main", "d": "edge"}


def spokes_for(rollout: dict | None):
    cfg = parse_fleet_config({
        "groups": [{"name": "all", "namespace": NS, "selector": {},
                    "serving": {"version": "1.23"}}],
        **({"rollout": rollout} if rollout else {})})
    found = [Profile(NS, n, {"ring": r}) for n, r in RINGS.items()]
    return cfg, select_spokes(cfg, found)


def names(wave) -> list[str]:
    return sorted(s.entry.name for s in wave.spokes)


def test_without_rollout_every_spoke_is_in_one_ungated_wave() -> None:
    cfg, spokes = spokes_for(None)
    (wave,) = assign_waves(cfg, spokes)
    assert (wave.name, wave.gated, names(wave)) == (ALL, False, ["a", "b", "c", "d"])


def test_first_matching_wave_wins_and_the_last_takes_the_rest() -> None:
    cfg, spokes = spokes_for({"waves": [
        {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}, "timeout": "90s"},
        {"name": "not-edge", "selector": {"matchExpressions": [
            {"key": "ring", "operator": "NotIn", "values": ["edge"]}]}},
        {"name": "rest", "maxFailures": 1}]})
    waves = assign_waves(cfg, spokes)
    assert [(w.name, names(w)) for w in waves] == [
        ("canary", ["a"]), ("not-edge", ["b", "c"]), ("rest", ["d"])]
    assert (waves[0].timeout_s, waves[1].timeout_s, waves[2].max_failures) == (90, 600, 1)
    assert all(w.gated for w in waves)


def test_a_spoke_no_wave_takes_is_an_error_naming_it() -> None:
    cfg, spokes = spokes_for({"waves": [
        {"name": "canary", "selector": {"matchLabels": {"ring": "canary"}}}]})
    with pytest.raises(SelectionError) as err:
        assign_waves(cfg, spokes)
    assert "rollout.waves: no wave takes spoke(s) b (fleet-system/b, labels ring=main)" \
        in str(err.value)
    assert "add a last wave without a selector" in str(err.value)


def test_an_empty_wave_is_kept() -> None:
    cfg, spokes = spokes_for({"waves": [
        {"name": "none", "selector": {"matchLabels": {"ring": "nowhere"}}}, {"name": "rest"}]})
    assert [names(w) for w in assign_waves(cfg, spokes)] == [[], ["a", "b", "c", "d"]]


def test_max_parallel_splits_a_wave_into_batches_in_name_order() -> None:
    cfg, spokes = spokes_for({"waves": [{"name": "all", "maxParallel": 3}]})
    (wave,) = assign_waves(cfg, spokes)
    assert [[s.entry.name for s in b] for b in wave.batches()] == [["a", "b", "c"], ["d"]]


@pytest.mark.parametrize(("rollout", "path"), [
    ({"waves": []}, "rollout.waves: List should have at least 1 item"),
    ({"waves": [{"name": "a"}, {"name": "b"}]}, "waves[0].selector: only the last wave"),
    ({"waves": [{"name": "a", "selector": {}}, {"name": "a"}]}, "waves[1].name: 'a' is already"),
    ({"waves": [{"name": "a", "timeout": "ten minutes"}]}, "rollout.waves[0].timeout"),
    ({"waves": [{"name": "a", "timeout": "0s"}]}, "rollout.waves[0].timeout"),
    ({"waves": [{"name": "a", "maxFailures": -1}]}, "rollout.waves[0].maxFailures"),
    ({"waves": [{"name": "a", "maxParallel": 0}]}, "rollout.waves[0].maxParallel"),
    ({"waves": [{"name": "A"}]}, "rollout.waves[0].name"),
    ({"wave": []}, "rollout.wave: unknown key"),
])
def test_rollout_config_errors_name_their_path(rollout: dict, path: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_fleet_config({"rollout": rollout})
    assert path in str(err.value)


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("10m", 600), ("1h", 3600),
                                                ("1m30s", 90)])
def test_durations(text: str, seconds: int) -> None:
    cfg = parse_fleet_config({"rollout": {"waves": [{"name": "a", "timeout": text}]}})
    assert cfg.rollout is not None and cfg.rollout.waves[0].timeout_seconds == seconds
