"""Rollback decisions over a stack's update history: back to the newest successful
config, never a stack that only waits for approval, never a Knative downgrade (the
failed config's versions are kept), never a secret in plaintext; the rolled-back config
refused until it changes or a person asks; the update named as the backend shows it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from runner.plan import Ring, Rollout
from runner.results import FAILED, SUCCEEDED, StackResult
from runner.rollback import (
    RollbackPlan,
    RollbackRefused,
    Target,
    config_digest,
    entries,
    file_values,
    keep_versions,
    plan_rollback,
    retry_refusal,
    stack_file,
    write_back,
)
from runner.selection import StackFile
from runner.summary import (
    WAITING_APPROVAL_EXIT,
    exit_code,
    render,
    render_rollback,
    to_json,
    to_roll_back,
)


@dataclass
class Value:
    value: str
    secret: bool = False


@dataclass
class Update:
    kind: str
    result: str
    version: int
    config: dict = field(default_factory=dict)
    start_time: datetime = datetime(2026, 11, 26, 10, 0, 0)
    message: str = ""


def fleet(serving: str, **extra: object) -> Value:
    entry = {"name": "s1", "clusterProfileRef": {"name": "s1", "namespace": "f"},
             "serving": {"version": serving, **extra}}
    return Value(json.dumps([entry]))


GOOD = {"knative-fleet:fleet": fleet("1.23"), "knative-fleet:ring": Value("1"),
        "aws:region": Value("eu-west-1")}
BAD = {"knative-fleet:fleet": fleet("1.23", config={"network": {"x": "y"}}),
       "knative-fleet:ring": Value("1")}
UPGRADE = {"knative-fleet:fleet": fleet("1.24"), "knative-fleet:ring": Value("1")}


def history(*updates: Update) -> list:
    return entries(updates)


def test_the_newest_successful_update_after_a_failed_one():
    got = plan_rollback(history(Update("update", "failed", 5, BAD),
                                Update("refresh", "succeeded", 4),
                                Update("update", "succeeded", 3, GOOD),
                                Update("update", "succeeded", 2, BAD)))
    assert isinstance(got, RollbackPlan)
    assert got.target.version == 3
    assert got.target.config == {"fleet": [{"name": "s1", "clusterProfileRef": {
        "name": "s1", "namespace": "f"}, "serving": {"version": "1.23"}}], "ring": 1}
    assert got.target.label == "update 3 (started 2026-11-26 10:00:00 UTC)"


def test_a_self_managed_backend_names_the_update_by_its_time_not_version_0():
    got = plan_rollback(history(
        Update("update", "failed", 0, BAD, datetime(2026, 11, 28, 6, 1, 2)),
        Update("update", "succeeded", 0, GOOD, datetime(2026, 11, 28, 5, 40, 12))))
    assert isinstance(got, RollbackPlan)
    assert got.target.label == "the update started 2026-11-28 05:40:12 UTC"
    assert "update 0" not in got.message
    assert got.message.startswith(f"knative-fleet rollback of config {got.failed.digest}: "
                                  "the config of the update started 2026-11-28 06:01:02 UTC "
                                  "failed; back to the config of the update started "
                                  "2026-11-28 05:40:12 UTC")


def test_nothing_to_roll_back_when_the_newest_update_succeeded_or_there_is_none():
    assert "nothing to roll back" in plan_rollback(history(Update("update", "succeeded", 2,
                                                                  GOOD)))
    assert "nothing to roll back" in plan_rollback([])


def test_no_successful_update_is_refused():
    with pytest.raises(RollbackRefused, match="no successful update"):
        plan_rollback(history(Update("update", "failed", 1, BAD)))


def test_a_secret_is_never_written_back():
    secret = {**GOOD, "knative-fleet:hub": Value("x", secret=True)}
    with pytest.raises(RollbackRefused, match="secret knative-fleet:hub"):
        plan_rollback(history(Update("update", "failed", 2, BAD),
                              Update("update", "succeeded", 1, secret)))


def test_a_rollback_keeps_the_knative_version_of_the_failed_config():
    got = plan_rollback(history(Update("update", "failed", 0, UPGRADE),
                                Update("update", "succeeded", 0, GOOD)))
    assert isinstance(got, RollbackPlan)
    assert got.target.config["fleet"][0]["serving"] == {"version": "1.24"}
    assert got.kept == ("Serving 1.24 of fleet entry 's1' (it was 1.23)",)
    assert got.summary == ("back to the config of the update started 2026-11-26 10:00:00 "
                           "UTC, keeping Serving 1.24 of fleet entry 's1' (it was 1.23): "
                           "Knative does not support downgrades")
    assert got.summary in got.message


def test_versions_are_kept_by_entry_and_group_name_and_the_rest_goes_back():
    failed = {"fleet": [{"name": "a", "serving": {"version": "1.23", "config": {"x": 1}}}],
              "groups": [{"name": "g", "eventing": {"version": "1.23"}},
                         {"name": "new", "serving": {"version": "1.23"}}]}
    good = {"fleet": [{"name": "a", "serving": {"version": "1.22"}}],
            "groups": [{"name": "g", "eventing": {"version": "1.22"}}]}
    values, kept = keep_versions(failed, good)
    assert values == {"fleet": [{"name": "a", "serving": {"version": "1.23"}}],
                      "groups": [{"name": "g", "eventing": {"version": "1.23"}}]}
    assert kept == ["Serving 1.23 of fleet entry 'a' (it was 1.22)",
                    "Eventing 1.23 of group 'g' (it was 1.22)"]
    assert good["fleet"][0]["serving"]["version"] == "1.22"  # not changed in place


def test_the_rolled_back_config_is_refused_until_it_changes_or_succeeds():
    rolled = plan_rollback(history(Update("update", "failed", 0, BAD),
                                   Update("update", "succeeded", 0, GOOD)))
    assert isinstance(rolled, RollbackPlan)
    after = history(Update("update", "succeeded", 0, GOOD, message=rolled.message),
                    Update("update", "failed", 0, BAD), Update("update", "succeeded", 0, GOOD))
    bad_values = after[1].values
    why = retry_refusal(after, bad_values)
    assert why and why.startswith("refused: this config") and "--retry-rolled-back" in why
    assert retry_refusal(after, after[0].values) is None  # the config it went back to
    assert retry_refusal(after, {**bad_values, "ring": 2}) is None  # a changed config
    retried = history(Update("update", "succeeded", 0, BAD), *[
        Update(e.kind, e.result, 0, e.config, message=e.message) for e in after])
    assert retry_refusal(retried, bad_values) is None  # it ran successfully since


def test_the_stack_file_and_the_history_give_one_digest(tmp_path: Path):
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(yaml.safe_dump({"config": {
        "knative-fleet:fleet": json.loads(GOOD["knative-fleet:fleet"].value),
        "knative-fleet:ring": 1, "aws:region": "eu-west-1"}}))
    assert config_digest(file_values(path)) == history(
        Update("update", "succeeded", 0, GOOD))[0].digest


def test_write_back_keeps_other_keys_and_the_salt(tmp_path: Path):
    (tmp_path / "Pulumi.yaml").write_text("name: p\nstackConfigDir: stacks\n")
    path = stack_file(tmp_path, "prod")
    assert path == tmp_path / "stacks" / "Pulumi.prod.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"encryptionsalt": "v1:abc", "config": {
        "aws:region": "eu-west-1", "knative-fleet:fleet": [{"name": "s1"}],
        "knative-fleet:releaseBase": "file:///x"}}))
    changed = write_back(path, Target(3, "t", {"fleet": [{"name": "s0"}], "ring": 2}))
    assert changed == ["fleet", "releaseBase", "ring"]
    assert yaml.safe_load(path.read_text()) == {"encryptionsalt": "v1:abc", "config": {
        "aws:region": "eu-west-1", "knative-fleet:fleet": [{"name": "s0"}],
        "knative-fleet:ring": 2}}


WAITING = ("wave 'main' waits for approval: its spokes (s3) change, and it was not "
           "started; its objects, in the clusters and in the state, are as they were. "
           "To approve, run again with KNATIVE_FLEET_APPROVE=main (or python -m runner up "
           "--approve main).")


def ring_of(*names: str) -> Ring:
    return Ring(1, tuple(StackFile(1, n, Path(f"Pulumi.{n}.yaml")) for n in names))


def test_a_stack_stopped_before_a_wave_waiting_for_approval_is_told_apart():
    waiting = StackResult("a", 1, "up", FAILED, error=WAITING + "\nupdate failed")
    assert waiting.waiting_approval
    # The program stopped by the engine mid-registration says so too: nothing else failed.
    stopped = StackResult("a", 1, "up", FAILED, error=(
        WAITING + "\nupdate failed\nResource monitor has terminated, shutting down"))
    assert stopped.waiting_approval
    unresolved = StackResult("b", 1, "up", FAILED, error=(
        "1 of 3 spokes could not be resolved: s2 (ClusterProfileNotFound).\n" + WAITING))
    assert not unresolved.waiting_approval
    assert not StackResult("c", 1, "up", SUCCEEDED).waiting_approval
    only_waiting = Rollout("up", [ring_of("a", "b")], {"a": waiting, "b": StackResult(
        "b", 1, "up", SUCCEEDED)}, stopped_at=1)
    assert exit_code(only_waiting) == WAITING_APPROVAL_EXIT
    assert to_json(only_waiting)["waitingApproval"] == ["a"]
    assert "Waiting for approval: a" in render(only_waiting)
    assert exit_code(Rollout("up", [ring_of("a", "b")], {"a": waiting, "b": unresolved},
                             stopped_at=1)) == 1


def test_only_stacks_whose_update_failed_are_rolled_back():
    waiting = StackResult("a", 1, "up", FAILED, error=WAITING)
    broken = StackResult("b", 1, "up", FAILED, error="wave 'canary' is not healthy: ...")
    rollout = Rollout("up", [ring_of("a", "b")], {"a": waiting, "b": broken}, stopped_at=1)
    assert [r.stack for r in to_roll_back(rollout)] == ["b"]
    only_waiting = Rollout("up", [ring_of("a")], {"a": waiting}, stopped_at=1)
    assert to_roll_back(only_waiting) == []
    text = render_rollback({}, ["a"])
    assert "not rolled back  a: it waits for approval" in text


def test_the_rollback_summary_says_what_was_refused_and_what_was_rolled_back():
    done = StackResult("b", 1, "rollback", SUCCEEDED, note=(
        "rolled back to the config of the update started 2026-11-28 05:40:12 UTC; fleet "
        "changed; the update started 2026-11-28 06:01:02 UTC failed"), changes={"update": 3})
    refused = StackResult("c", 1, "rollback", FAILED, error=(
        "the config of update 3 holds the secret knative-fleet:hub; ..."))
    text = render_rollback({"b": done, "c": refused})
    assert "rolled back  b: rolled back to the config of the update started" in text
    assert "; 3 update" in text
    assert "NOT rolled back  c: the config of update 3 holds the secret" in text
