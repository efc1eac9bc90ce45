"""The example CI workflows (.github/workflows/) pass actionlint, built by the toolchain."""

from __future__ import annotations

import subprocess

from lab.handle import Lab
from lab.paths import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def test_workflows_pass_actionlint(lab: Lab) -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert files, f"no workflow in {WORKFLOWS}"
    proc = subprocess.run([str(lab.bin / "actionlint"), "-no-color", *map(str, files)],
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout


def test_actionlint_finds_a_broken_workflow(lab: Lab, tmp_path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                      "    steps:\n      - run: echo ${{ matrix.nope }}\n")
    proc = subprocess.run([str(lab.bin / "actionlint"), "-no-color", str(broken)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "matrix" in proc.stdout, proc.stdout
