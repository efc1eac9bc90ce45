"""toolchain/build.sh builds the lab's toolchain for `make demo` (with the Pulumi binaries as
released) and the tests' own tools (the Knative Operator, actionlint, the Pulumi binaries
with the toolchain's patches) only on
`--test-tools`, each stage once, and marks a stage complete only when every one of its
builds succeeded."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.build_script import shell_function

STAGE_FUNCTIONS = ("lane", "wait_lanes", "lock", "main", "test_tools")
BUILDS = ("build_k8s", "build_provider", "build_etcd", "build_pulumi", "build_operator",
          "build_actionlint", "build_released_pulumi", "build_released_provider")
TEST_TOOLS = ["build_actionlint", "build_operator", "build_provider", "build_pulumi"]


def run_stage(out: Path, stage: str, failing: str = "") -> subprocess.CompletedProcess:
    """Runs the script's own stage functions with every build step replaced by one that
    writes its name to `out/calls` (and fails if it is `failing`)."""
    stubs = "".join(
        f'{b}() {{ echo {b} >> "$OUT/calls"; [ "{b}" != "{failing}" ]; }}\n' for b in BUILDS)
    functions = "\n".join(shell_function(f) for f in STAGE_FUNCTIONS)
    prelude = (f'set -euo pipefail; log() {{ echo "$*" >&2; }}; LANES=()\n'
               f'CACHE_ROOT="{out}"; OUT="{out}/entry"; BIN="$OUT/bin"; mkdir -p "$OUT"\n'
               'PLUGINS="$OUT/plugins"; PULUMI_HOME_DIR="$OUT/home"; RELEASED="$OUT/released"\n'
               'RELEASED_BIN="$RELEASED/bin"; RELEASED_HOME="$RELEASED/home"\n'
               'install_plugins() { :; }; home_logs() { :; }\n')
    return subprocess.run(["bash", "-c", prelude + stubs + functions + f"\n{stage}\n"],
                          capture_output=True, text=True)


def calls(out: Path) -> list[str]:
    path = out / "entry" / "calls"
    got = sorted(path.read_text().split()) if path.exists() else []
    path.unlink(missing_ok=True)
    return got


def test_the_demo_toolchain_leaves_the_tests_tools_out(tmp_path: Path) -> None:
    res = run_stage(tmp_path, "main")
    assert res.returncode == 0, res.stderr
    assert calls(tmp_path) == ["build_etcd", "build_k8s", "build_released_provider",
                               "build_released_pulumi"]
    assert (tmp_path / "entry" / ".complete").exists()
    assert not (tmp_path / "entry" / ".test-tools-complete").exists()


def test_test_tools_build_on_the_demo_toolchain_once(tmp_path: Path) -> None:
    assert run_stage(tmp_path, "main").returncode == 0
    calls(tmp_path)
    res = run_stage(tmp_path, "test_tools")
    assert res.returncode == 0, res.stderr
    assert calls(tmp_path) == TEST_TOOLS
    assert res.stdout.strip() == str(tmp_path / "entry" / "bin")
    again = run_stage(tmp_path, "test_tools")
    assert again.returncode == 0 and calls(tmp_path) == []


def test_on_a_new_machine_test_tools_builds_everything(tmp_path: Path) -> None:
    res = run_stage(tmp_path, "test_tools")
    assert res.returncode == 0, res.stderr
    assert calls(tmp_path) == sorted(BUILDS)


def test_a_failed_build_leaves_its_stage_incomplete(tmp_path: Path) -> None:
    assert run_stage(tmp_path, "main").returncode == 0
    res = run_stage(tmp_path, "test_tools", failing="build_operator")
    assert res.returncode != 0
    assert "failed: operator" in res.stderr
    assert not (tmp_path / "entry" / ".test-tools-complete").exists()
    calls(tmp_path)
    res = run_stage(tmp_path, "test_tools")
    assert res.returncode == 0 and calls(tmp_path) == TEST_TOOLS
