"""Locates (building on first use) the toolchain that `toolchain/build.sh` caches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lab.paths import REPO

BUILD_SCRIPT = REPO / "toolchain" / "build.sh"


def _build(*args: str) -> Path:
    out = subprocess.run([str(BUILD_SCRIPT), *args], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1])


def bin_dir(build: bool = True) -> Path:
    """The toolchain's bin directory; builds it when `build` and it is missing."""
    return _build() if build else _build("--print")


def with_test_tools() -> Path:
    """The toolchain's bin directory once it also holds the tools only the tests use (the
    Knative Operator, actionlint), built on first use: the demo's toolchain leaves them
    out, so a new machine's first `make demo` does not wait for them."""
    return _build("--test-tools")


def pulumi_home(bin_path: Path) -> Path:
    """The toolchain's Pulumi home: its plugin store holds the built Kubernetes provider,
    so Pulumi loads it as a released plugin (build.sh installs it there)."""
    return bin_path.parent / "pulumi-home"


def tool_env(bin_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every lab and test command runs in: the toolchain first on PATH."""
    env = dict(os.environ)
    # The venv's python first: the Python language host runs `python` from PATH.
    venv_bin = Path(sys.executable).parent
    env["PATH"] = os.pathsep.join([str(bin_path), str(venv_bin), env.get("PATH", "")])
    env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] = "true"
    env["PULUMI_SKIP_UPDATE_CHECK"] = "true"
    env["PULUMI_HOME"] = str(pulumi_home(bin_path))
    env["KWOK_KUBECTL_BINARY"] = str(bin_path / "kubectl")
    if extra:
        env.update(extra)
    return env
