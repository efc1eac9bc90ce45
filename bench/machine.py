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

from bench.design import PINS
from lab.paths import REPO


def _first_line(args: list[str], env: dict[str, str]) -> str:
    try:
        out = subprocess.run(args, env=env, cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unavailable"
    return (out.strip().splitlines() or ["unavailable"])[0]


def _cpu_model() -> str:
    try:
        found = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
    except OSError:
        found = None
    return found.group(1).strip() if found else platform.processor()


def _pins() -> dict[str, str]:
    """toolchain/pins.env: the versions the toolchain builds."""
    return dict(line.split("=", 1) for line in PINS.read_text().splitlines()
                if "=" in line and not line.startswith("#"))


def machine_facts(toolchain: Path, env: dict[str, str]) -> dict[str, Any]:
    """CPU, memory and tool versions, as flat keys of results.json."""
    pins = _pins()
    kubectl = _first_line([str(toolchain / "kubectl"), "version", "--client"], env)
    go = shutil.which("go", path=env.get("PATH"))
    return {
        "machine_cpu_count": os.cpu_count(),
        "machine_cpu_model": _cpu_model(),
        "machine_memory_bytes": psutil.virtual_memory().total,
        "machine_kernel": platform.release(),
        "python_version": platform.python_version(),
        "go_version": _first_line([go, "version"], env) if go else "not on PATH",
        "pulumi_version": _first_line(["pulumi", "version"], env),
        "pulumi_python_sdk_version": importlib.metadata.version("pulumi"),
        "pulumi_kubernetes_version": pins.get("PULUMI_KUBERNETES_VERSION", "unknown"),
        "pulumi_language_host_sdk_version": pins.get("PULUMI_LANGHOST_SDK_VERSION", "unknown"),
        "kubectl_version": kubectl.removeprefix("Client Version: "),
        "kubernetes_version": pins.get("K8S_VERSION", "unknown"),
        "kwok_version": pins.get("KWOK_VERSION", "unknown"),
    }


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: other jobs on the machine show here."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def pulumi_default_parallel(env: dict[str, str]) -> str:
    """The CLI's default for `--parallel`, read from its own help."""
    out = subprocess.run(["pulumi", "up", "--help"], env=env, cwd=REPO, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    m = re.search(r"--parallel int32.*\(default (\d+)\)", out)
    return m.group(1) if m else "unknown"
