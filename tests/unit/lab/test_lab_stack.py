"""The stack driver runs pulumi in the toolchain's environment plus its own backend,
passphrase and checkpoint setting, nothing else."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lab.stack import PARALLEL_DIFF, PASSPHRASE, SKIP_CHECKPOINTS, Stack


def test_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin")
    toolchain = tmp_path / "toolchain" / "bin"
    stack = Stack(tmp_path, "t-x", tmp_path / "state", toolchain, env={"EXTRA": "1"})
    env = stack.env
    # The released binaries (KNATIVE_FLEET_BINARIES' default) first, then the toolchain.
    released = tmp_path / "toolchain" / "released"
    assert env["PATH"].split(os.pathsep) == [str(released / "bin"), str(toolchain),
                                             str(Path(sys.executable).parent), "/usr/bin"]
    assert env["PULUMI_BACKEND_URL"] == f"file://{tmp_path / 'state'}"
    assert env["PULUMI_CONFIG_PASSPHRASE"] == PASSPHRASE
    assert env["PULUMI_SKIP_UPDATE_CHECK"] == "true"
    assert env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] == "true"
    assert env["PULUMI_HOME"] == str(released / "pulumi-home")
    assert env[SKIP_CHECKPOINTS] == "true"
    assert env[PARALLEL_DIFF] == "true"
    assert env["EXTRA"] == "1"
    assert (tmp_path / "state").is_dir()


def test_caller_env_wins(tmp_path: Path) -> None:
    stack = Stack(tmp_path, "t-x", tmp_path / "state", tmp_path,
                  env={SKIP_CHECKPOINTS: "false"})
    assert stack.env[SKIP_CHECKPOINTS] == "false"
