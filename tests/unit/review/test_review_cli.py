"""`python -m review`: the files it writes and its exit codes, from a recording and from
a (fake) `pulumi` on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab.paths import REPO
from review import preview
from review.__main__ import main

PREVIEWS = REPO / "tests" / "support" / "previews"


@pytest.mark.parametrize(("name", "code"), [("unreachable", 1), ("config-change", 0)])
def test_writes_both_reports_and_exits_with_the_previews_status(
        tmp_path: Path, name: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--stack", "demo", "--from-json", str(PREVIEWS / f"{name}.json.gz"),
                 "--out", str(tmp_path)]) == code
    assert (tmp_path / "report.md").read_text().startswith("## knative-fleet preview `demo`")
    assert json.loads((tmp_path / "report.json").read_text())["exitCode"] == code
    assert str(tmp_path / "report.md") in capsys.readouterr().out


def test_a_live_review_loads_neither_the_offline_review_nor_the_planner() -> None:
    code = ("import sys, review.__main__; print(sorted(m for m in sys.modules "
            "if m.startswith(('review.offline', 'fleet', 'config'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as got:
        main(["--from-json", "x"])
    assert got.value.code == 2
    with pytest.raises(SystemExit) as got:
        main(["--stack", "demo", "--from-json", str(tmp_path / "missing.json")])
    assert got.value.code == 2


def fake_pulumi(tmp_path: Path, stdout: str, stderr: str, code: int) -> dict[str, str]:
    script = tmp_path / "pulumi"
    script.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/args\ncat <<'EOF'\n{stdout}\n"
                      f"EOF\necho '{stderr}' >&2\nexit {code}\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}


def test_run_returns_the_document_and_exit_code(tmp_path: Path) -> None:
    doc = {"steps": [], "diagnostics": [{"severity": "error", "message": "error: boom\n"}]}
    got = preview.run("demo", ["--refresh"], env=fake_pulumi(tmp_path, json.dumps(doc),
                                                             "", 1))
    assert got.exit_code == 1 and got.document == doc
    assert (tmp_path / "args").read_text().split() == [
        "preview", "--json", "--stack", "demo", "--non-interactive", "--refresh"]


def test_a_pulumi_failure_without_json_becomes_an_error(tmp_path: Path) -> None:
    got = preview.run("nope", env=fake_pulumi(tmp_path, "", "error: no stack named nope",
                                              255))
    assert got.exit_code == 255
    assert got.document["diagnostics"][0]["message"] == "error: no stack named nope"
