"""A lab's stack state goes with its clusters: a state kept after them would make the
next `make demo` take objects on new spokes for present, or fail to update them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lab.__main__ as lab_cli
from lab.paths import lab_dir


class FakeKwok:
    """kwokctl with clusters in a list: what `down` and `up` ask of it."""

    clusters_now: list[str] = []
    deleted: list[str] = []
    created: list[str] = []

    def __init__(self, *_: object) -> None:
        pass

    def clusters(self) -> list[str]:
        return list(self.clusters_now)

    def delete(self, name: str) -> None:
        self.deleted.append(name)
        self.clusters_now.remove(name)

    def create(self, name: str) -> float:
        self.created.append(name)
        self.clusters_now.append(name)
        return 0.1

    def kubeconfig_path(self, name: str) -> Path:
        return Path(f"/nowhere/{name}.kubeconfig")

    def egress_config(self, name: str) -> Path:
        return Path(f"/nowhere/{name}.yaml")


class FakeHost:
    """The lab's webhook host, started and stopped on paper: a unit test starts no process."""

    calls: list[str] = []

    @classmethod
    def start(cls, where: object, commands: Path) -> int:
        cls.calls.append(f"start {commands.name}")
        return 1

    @classmethod
    def stop(cls, where: object) -> None:
        cls.calls.append("stop")


@pytest.fixture()
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    FakeKwok.clusters_now, FakeKwok.deleted, FakeKwok.created = [], [], []
    monkeypatch.setattr(lab_cli, "Kwok", FakeKwok)
    monkeypatch.setattr(lab_cli, "tool_env", lambda _bin: {})
    monkeypatch.setattr(lab_cli, "bin_dir", lambda build: tmp_path / "bin")
    monkeypatch.setattr(lab_cli, "webhook_commands", lambda build: tmp_path / "webhooks")
    FakeHost.calls = []
    monkeypatch.setattr(lab_cli, "webhook_host", FakeHost)
    place = lab_dir(tmp_path / "lab")
    (place.state / ".pulumi" / "stacks").mkdir(parents=True)
    (place.state / ".pulumi" / "stacks" / "demo.json").write_text("{}")
    return place


def test_down_removes_the_state_with_the_clusters(where) -> None:
    FakeKwok.clusters_now = ["hub", "spoke-1", "other"]
    where.description.write_text(json.dumps(
        {"bin": "/b", "spokes": [{"name": "spoke-1"}]}))
    lab_cli.down(where)
    assert FakeHost.calls == ["stop"]
    assert FakeKwok.deleted == ["hub", "spoke-1"]
    assert not where.state.exists()
    assert not where.description.exists()


def test_up_that_creates_spokes_anew_removes_a_state_left_behind(where, monkeypatch) -> None:
    monkeypatch.setattr(lab_cli, "answers", lambda _kubeconfig: False)
    monkeypatch.setattr(lab_cli.register, "install_clusterprofile_crd", lambda _api: None)
    monkeypatch.setattr(lab_cli.register, "api_client", lambda _kc: None)
    monkeypatch.setattr(lab_cli.register, "register_spoke", lambda *_, **__: None)
    monkeypatch.setattr(lab_cli, "lab_role_documents", lambda *_: [])
    monkeypatch.setattr(lab_cli.register, "provider_file", lambda *_: {})
    lab_cli.up(where, 1)
    assert FakeHost.calls == []  # a lab without --webhooks runs no webhook host
    assert FakeKwok.created == ["hub", "spoke-1"]
    assert not where.state.exists()
    FakeKwok.created, FakeKwok.clusters_now = [], []
    lab_cli.up(where, 1, webhooks=True)
    assert FakeHost.calls == ["start webhooks"]
    assert where.webhooks_on


def test_forget_state_keeps_nothing_else(where) -> None:
    (where.root / "keep.txt").write_text("x")
    lab_cli.forget_state(where, "test")
    lab_cli.forget_state(where, "twice is fine")
    assert not where.state.exists()
    assert (where.root / "keep.txt").read_text() == "x"
