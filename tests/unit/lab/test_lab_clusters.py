"""The lab's cluster create: only a lost port race is retried, and only a few times."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.clusters import CREATE_ATTEMPTS, Kwok, lost_a_port_race
from lab.paths import LabDir

RACE = ("kwokctl scale node failed: Get https://127.0.0.1:32728/api: "
        "tls: failed to verify certificate: x509: certificate signed by unknown authority")


@pytest.fixture(autouse=True)
def _no_stage_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """kwok's Stages come from the toolchain's cache, which a unit test does not build."""
    monkeypatch.setattr("lab.clusters.webhook_commands", lambda build: tmp_path)
    monkeypatch.setattr("lab.clusters.stage_documents", lambda _dir: [{"kind": "Stage"}])


class Scripted(Kwok):
    """A Kwok whose kwokctl calls fail as scripted (one entry per `create cluster`)."""

    def __init__(self, tmp: Path, failures: list[str | None]) -> None:
        super().__init__(tmp / "bin", {}, LabDir(tmp / "lab"))
        self.failures = failures
        self.calls: list[tuple[str, ...]] = []

    def run(self, *args: str, check: bool = True, capture: bool = True) -> str:
        self.calls.append(args[:2])
        if args[:2] == ("create", "cluster"):
            failure = self.failures.pop(0)
            if failure:
                raise RuntimeError(failure)
        return ""


def test_the_signs_of_a_lost_port() -> None:
    assert lost_a_port_race(RACE)
    assert lost_a_port_race("listen tcp 127.0.0.1:32766: bind: address already in use")
    assert not lost_a_port_race("exec: kube-apiserver: no such file or directory")


def test_a_lost_port_is_created_again_after_a_delete(tmp_path: Path) -> None:
    kwok = Scripted(tmp_path, [RACE, None])
    kwok.lab.root.mkdir(parents=True)
    kwok.create("hub")
    assert kwok.calls == [("create", "cluster"), ("delete", "cluster"),
                          ("create", "cluster"), ("scale", "node")]


def test_other_failures_and_the_last_attempt_raise(tmp_path: Path) -> None:
    kwok = Scripted(tmp_path, ["exec: etcd: no such file or directory"])
    kwok.lab.root.mkdir(parents=True)
    with pytest.raises(RuntimeError, match="no such file"):
        kwok.create("hub")
    kwok = Scripted(tmp_path, [RACE] * CREATE_ATTEMPTS)
    with pytest.raises(RuntimeError, match="x509"):
        kwok.create("hub")
    assert kwok.calls.count(("create", "cluster")) == CREATE_ATTEMPTS
