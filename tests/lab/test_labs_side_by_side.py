"""Two labs brought up at the same moment from two checkouts on one machine both come
up: ports are the machine's, so every lab creates its clusters under one machine-wide
lock (lab.clusters.machine_ports_lock), whichever checkout it runs from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lab.paths import LAB_DIR_ENV, REPO, SHARED
from lab.toolchain import bin_dir

pytestmark = pytest.mark.lab
# What a checkout holds that a second one must not share with this one.
NOT_COPIED = shutil.ignore_patterns(".git", ".venv", ".lab*", ".review", "__pycache__",
                                    ".pytest_cache", ".ruff_cache")


def lab_command(checkout: Path, lab: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "lab", "--dir", str(lab), *args]


def servers(lab: Path) -> set[str]:
    """Every cluster's API server address in the lab."""
    found = set()
    for kubeconfig in lab.glob("**/*kubeconfig*"):
        if kubeconfig.is_file():
            doc = yaml.safe_load(kubeconfig.read_text()) or {}
            found |= {c["cluster"]["server"] for c in doc.get("clusters") or []}
    return found


def test_two_labs_started_together_from_two_checkouts_both_come_up(tmp_path: Path) -> None:
    bin_dir()  # the toolchain, built once before the two labs race for ports
    second = tmp_path / "checkout-b"
    shutil.copytree(REPO, second, ignore=NOT_COPIED)
    (tmp_path / "shared").symlink_to(SHARED)  # beside the checkout, as beside this one
    env = {k: v for k, v in os.environ.items() if k != LAB_DIR_ENV}
    labs = {REPO: tmp_path / "lab-a", second: tmp_path / "lab-b"}
    try:
        procs = {checkout: subprocess.Popen(lab_command(checkout, lab, "up", "--spokes", "1"),
                                            cwd=checkout, env=env, stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True)
                 for checkout, lab in labs.items()}
        outputs = {checkout: proc.communicate(timeout=900)[0]
                   for checkout, proc in procs.items()}
        for checkout, proc in procs.items():
            assert proc.returncode == 0, f"lab from {checkout}:\n{outputs[checkout]}"
        for checkout, lab in labs.items():
            status = subprocess.run(lab_command(checkout, lab, "status"), cwd=checkout, env=env,
                                    capture_output=True, text=True, timeout=120)
            assert status.returncode == 0, status.stdout + status.stderr
            assert status.stdout.count(" up ") == 2, status.stdout
        a, b = (servers(lab) for lab in labs.values())
        assert len(a) == 2 and len(b) == 2 and not a & b, (a, b)
    finally:
        for checkout, lab in labs.items():
            subprocess.run(lab_command(checkout, lab, "down"), cwd=checkout, env=env,
                           capture_output=True, text=True, timeout=300)
