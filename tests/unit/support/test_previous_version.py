"""The previous version the upgrade e2e installs: the program's paths and the commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lab.paths import REPO
from tests.support.previous_version import previous_commit, program_paths, write_out


def test_the_program_is_its_entry_point_and_every_package_it_imports() -> None:
    paths = program_paths()
    assert paths[:2] == ["Pulumi.yaml", "__main__.py"]
    for package in ("components", "knative", "config", "access"):
        assert package in paths
    for not_program in ("tests", "lab", "bench", "runner"):
        assert not_program not in paths


def test_the_previous_commit_came_before_the_newest_program_change(tmp_path: Path) -> None:
    commit = previous_commit()
    changed = subprocess.run(["git", "diff", "--name-only", commit, "HEAD", "--",
                              *program_paths()], cwd=REPO, check=True, capture_output=True,
                             text=True).stdout.split()
    assert changed, "the previous version has the same program as this one"
    out = write_out(commit, tmp_path / "project")
    assert (out / "__main__.py").is_file() and (out / "Pulumi.yaml").is_file()
