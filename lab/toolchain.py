"""Locates (building on first use) the toolchain that `toolchain/build.sh` caches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.settings import Binaries, settings
from lab.paths import REPO

BUILD_SCRIPT = REPO / "toolchain" / "build.sh"
WEBHOOKS_SCRIPT = REPO / "toolchain" / "webhooks.sh"


def _build(*args: str) -> Path:
    out = subprocess.run([str(BUILD_SCRIPT), *args], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1])


def bin_dir(build: bool = True) -> Path:
    """The toolchain's bin directory; builds it when `build` and it is missing."""
    return _build() if build else _build("--print")


def webhook_commands(build: bool = True, tests: bool = False) -> Path:
    """The directory of Knative's webhook commands and kwok's Stages (toolchain/webhooks.sh):
    the default minor's, and with `tests` the minors only the tests install; built when
    `build` and missing."""
    args = ["--tests"] if tests else [] if build else ["--print"]
    out = subprocess.run([str(WEBHOOKS_SCRIPT), *args], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1])


def with_test_tools() -> Path:
    """The toolchain's bin directory once it also holds the tools only the tests use (the
    Knative Operator, actionlint), built on first use: the demo's toolchain leaves them
    out, so a new machine's first `make demo` does not wait for them), and Knative's
    webhook commands of every release the tests install."""
    webhook_commands(tests=True)
    return _build("--test-tools")


def pulumi_home(bin_path: Path, binaries: Binaries = "released") -> Path:
    """The toolchain's Pulumi home for a set of Pulumi binaries: its plugin store holds
    that set's Kubernetes provider, so Pulumi loads it as a released plugin (build.sh
    installs it there)."""
    if binaries == "released":
        return bin_path.parent / "released" / "pulumi-home"
    return bin_path.parent / "pulumi-home"


def pulumi_bin(bin_path: Path, binaries: Binaries = "released") -> Path:
    """Where the Pulumi CLI and its language host of a set are: beside the toolchain's bin,
    the binaries exactly as released (the lab toolchain), or the toolchain's own bin
    (patched, `build.sh --test-tools`)."""
    return bin_path.parent / "released" / "bin" if binaries == "released" else bin_path


def tool_env(bin_path: Path, extra: dict[str, str] | None = None,
             binaries: Binaries | None = None) -> dict[str, str]:
    """The environment every lab and test command runs in: the chosen set of Pulumi
    binaries (KNATIVE_FLEET_BINARIES unless given), then the toolchain, first on PATH."""
    binaries = binaries or settings().binaries
    env = dict(os.environ)
    # The venv's python first: the Python language host runs `python` from PATH.
    venv_bin = Path(sys.executable).parent
    path = dict.fromkeys([str(pulumi_bin(bin_path, binaries)), str(bin_path), str(venv_bin)])
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] = "true"
    env["PULUMI_SKIP_UPDATE_CHECK"] = "true"
    env["PULUMI_HOME"] = str(pulumi_home(bin_path, binaries))
    env["KWOK_KUBECTL_BINARY"] = str(bin_path / "kubectl")
    if extra:
        env.update(extra)
    return env
