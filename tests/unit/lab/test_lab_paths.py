"""Which lab a command works on is decided when it runs, not when `lab` is imported:
the benchmark's lab and the tests' lab never share a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.clusters import Kwok
from lab.paths import LAB_DIR, LAB_DIR_ENV, REPO, lab_dir, worker_lab_dir


def test_default_is_dot_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LAB_DIR_ENV, raising=False)
    assert LAB_DIR == REPO / ".lab"
    where = lab_dir()
    assert where.root == REPO / ".lab"
    assert where.description == REPO / ".lab" / "lab.json"
    assert where.kubeconfig("spoke-1") == REPO / ".lab" / "spoke-1.kubeconfig"


def test_environment_is_read_when_called(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.setenv(LAB_DIR_ENV, str(tmp_path / "late"))
    assert lab_dir().root == tmp_path / "late"


def test_a_given_directory_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(LAB_DIR_ENV, str(tmp_path / "env"))
    assert lab_dir(tmp_path / "given").root == tmp_path / "given"


def test_kwok_works_in_its_labs_directory(tmp_path: Path) -> None:
    kwok = Kwok(Path("/toolchain/bin"), {}, lab_dir(tmp_path))
    assert kwok.env["KWOK_WORKDIR"] == str(tmp_path / "kwok")
    assert kwok.kubeconfig_path("hub") == tmp_path / "hub.kubeconfig"
    assert kwok.pids("hub") == {}


def test_worker_labs_are_siblings_of_the_lab(tmp_path: Path) -> None:
    base = tmp_path / "lab"
    assert worker_lab_dir(None, base).root == base
    assert worker_lab_dir("gw0", base).root == base
    assert worker_lab_dir("gw1", base).root == tmp_path / "lab-gw1"
