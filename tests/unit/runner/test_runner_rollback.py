"""The last successful config of a stack, from its update history, and writing it back
into the stack file without touching other keys or writing a secret in plaintext."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from runner.rollback import RollbackRefused, Target, last_good, stack_file, write_back


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
    start_time: str = "2026-11-26T10:00:00"


GOOD = {"knative-fleet:fleet": Value('[{"name": "s1", "serving": {"version": "1.22"}}]'),
        "knative-fleet:ring": Value("1"), "aws:region": Value("eu-west-1")}
BAD = {"knative-fleet:fleet": Value('[{"name": "s1", "serving": {"version": "1.99"}}]')}


def test_the_newest_successful_update_after_a_failed_one():
    failed, target = last_good([Update("update", "failed", 5, BAD),
                                Update("refresh", "succeeded", 4),
                                Update("update", "succeeded", 3, GOOD),
                                Update("update", "succeeded", 2, BAD)])
    assert failed
    assert target.version == 3
    assert target.config == {"fleet": [{"name": "s1", "serving": {"version": "1.22"}}],
                             "ring": 1}


def test_a_stack_whose_newest_update_succeeded_has_nothing_to_roll_back():
    failed, target = last_good([Update("update", "succeeded", 2, GOOD)])
    assert not failed and target.version == 2


def test_no_successful_update_means_no_target():
    assert last_good([Update("update", "failed", 1, BAD)]) == (True, None)
    assert last_good([]) == (False, None)


def test_a_secret_is_never_written_back():
    secret = {**GOOD, "knative-fleet:hub": Value("x", secret=True)}
    with pytest.raises(RollbackRefused, match="secret knative-fleet:hub"):
        last_good([Update("update", "failed", 2, BAD), Update("update", "succeeded", 1,
                                                              secret)])


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


WAITING = ("wave 'main' waits for approval: it and the waves after it were not started "
           "(main; spokes: s3); their objects are as they were. To approve, run again with "
           "KNATIVE_FLEET_APPROVE=main (or python -m runner up --approve main).")


def test_a_stack_stopped_before_a_wave_waiting_for_approval_is_told_apart():
    from runner.plan import Ring, Rollout
    from runner.results import FAILED, SUCCEEDED, StackResult
    from runner.summary import WAITING_APPROVAL_EXIT, exit_code, render, to_json

    waiting = StackResult("a", 1, "up", FAILED, error=WAITING)
    assert waiting.waiting_approval
    unresolved = StackResult("b", 1, "up", FAILED, error=(
        "1 of 3 spokes could not be resolved: s2 (ClusterProfileNotFound). " + WAITING))
    assert not unresolved.waiting_approval
    assert not StackResult("c", 1, "up", SUCCEEDED).waiting_approval
    from runner.selection import StackFile

    ring = Ring(1, tuple(StackFile(1, n, Path(f"Pulumi.{n}.yaml")) for n in ("a", "b")))
    only_waiting = Rollout("up", [ring], {"a": waiting, "b": StackResult(
        "b", 1, "up", SUCCEEDED)}, stopped_at=1)
    assert exit_code(only_waiting) == WAITING_APPROVAL_EXIT
    assert to_json(only_waiting)["waitingApproval"] == ["a"]
    assert "Waiting for approval: a" in render(only_waiting)
    assert exit_code(Rollout("up", [ring], {"a": waiting, "b": unresolved},
                             stopped_at=1)) == 1
