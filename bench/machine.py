"""The machine and tool versions a result was measured with, so two results can be
compared only when they should be."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psutil

from lab.paths import REPO

PINS = REPO / "toolchain" / "pins.env"


def _output(args: list[str], env: dict[str, str]) -> str:
    try:
        return subprocess.run(args, env=env, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _first_line(args: list[str], env: dict[str, str]) -> str:
    return (_output(args, env).strip().splitlines() or ["unavailable"])[0]


def _cpu_model() -> str:
    """The CPU's model name as lscpu gives it (psutil has none)."""
    out = _output(["lscpu"], {**os.environ, "LC_ALL": "C"})
    found = re.search(r"^Model name:\s*(.+)$", out, re.M)
    return found.group(1).strip() if found else platform.processor() or "unknown"


def _pins() -> dict[str, str]:
    """toolchain/pins.env: the versions the toolchain builds."""
    return dict(line.split("=", 1) for line in PINS.read_text().splitlines()
                if "=" in line and not line.startswith("#"))


def machine_facts(toolchain: Path, env: dict[str, str]) -> dict[str, Any]:
    """CPU, memory and tool versions, as flat keys of a results file."""
    pins = _pins()
    kubectl = _first_line([str(toolchain / "kubectl"), "version", "--client"], env)
    go = shutil.which("go", path=env.get("PATH"))
    return {
        "machine_cpu_count": psutil.cpu_count(),
        "machine_cpu_model": _cpu_model(),
        "machine_memory_bytes": psutil.virtual_memory().total,
        "machine_kernel": platform.release(),
        "python_version": platform.python_version(),
        "go_version": _first_line([go, "version"], env) if go else "not on PATH",
        "pulumi_version": pulumi_version(env),
        "pulumi_python_sdk_version": importlib.metadata.version("pulumi"),
        "pulumi_kubernetes_version": pins.get("PULUMI_KUBERNETES_VERSION", "unknown"),
        "pulumi_language_host_sdk_version": pins.get("PULUMI_LANGHOST_SDK_VERSION", "unknown"),
        "kubectl_version": kubectl.removeprefix("Client Version: "),
        "kubernetes_version": pins.get("K8S_VERSION", "unknown"),
        "kwok_version": pins.get("KWOK_VERSION", "unknown"),
    }


def pulumi_version(env: dict[str, str]) -> str:
    """`pulumi version` of the CLI first on the PATH of `env`."""
    return _first_line(["pulumi", "version"], env)


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other jobs on the machine show here."""
    return " ".join(f"{x:.2f}" for x in psutil.getloadavg())


def pulumi_default_parallel(env: dict[str, str]) -> str:
    """The CLI's default for `--parallel`, read from its own help."""
    m = re.search(r"--parallel int32.*\(default (\d+)\)", _output(["pulumi", "up", "--help"], env))
    return m.group(1) if m else "unknown"
