"""The lab driver and the one way every section runs: the lab always comes down, its
stacks are dropped, and the results and the section's part are written only from a run
that succeeded."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from bench.commands import BenchError
from bench.own_lab import BenchLab
from bench.report import replace_section
from bench.section import Options, Run, Section, unchanged


class Dropped:
    """Stands in for a stack: remembers that it was dropped."""

    stack = "t-bench-x"

    def __init__(self) -> None:
        self.dropped = False

    def drop(self) -> None:
        self.dropped = True


@pytest.fixture
def lab_commands(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The `python -m lab` commands the driver gives, instead of giving them."""
    given: list[tuple[str, ...]] = []
    monkeypatch.setattr(BenchLab, "command",
                        lambda self, *args, check=True: given.append(args))
    return given


def test_a_lab_that_did_its_work_is_taken_down_and_removed(
        tmp_path: Path, lab_commands: list[tuple[str, ...]]) -> None:
    bench = BenchLab(tmp_path / ".lab-bench-x")
    bench.root.mkdir()
    stack = Dropped()
    bench.stacks.append(stack)  # type: ignore[arg-type]
    assert bench.around(lambda: None)
    assert lab_commands == [("down",)]
    assert stack.dropped and bench.stacks == []
    assert not bench.root.exists()


def test_a_failed_lab_keeps_its_logs(tmp_path: Path,
                                     lab_commands: list[tuple[str, ...]]) -> None:
    bench = BenchLab(tmp_path / ".lab-bench-x")
    bench.root.mkdir()
    stack = Dropped()
    bench.stacks.append(stack)  # type: ignore[arg-type]

    def work() -> None:
        raise BenchError("pulumi up failed")

    assert not bench.around(work)
    assert lab_commands == [("dump", "--out", str(bench.root / "dump")), ("down",)]
    assert stack.dropped and bench.root.exists()


def test_an_interrupted_lab_comes_down_too(tmp_path: Path,
                                           lab_commands: list[tuple[str, ...]]) -> None:
    def work() -> None:
        raise SystemExit(143)  # SIGTERM

    with pytest.raises(SystemExit):
        BenchLab(tmp_path / ".lab-bench-x").around(work)
    assert lab_commands[-1] == ("down",)


def test_no_lab_before_it_is_up(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="no lab is up"):
        BenchLab(tmp_path).lab  # noqa: B018 - the property raises


def fake_section(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> ModuleType:
    """A section package of three samples and a fact, registered for import."""
    module = ModuleType("fake_section")

    def measure(run: Run) -> None:
        if fail:
            raise BenchError("the spoke is not fresh")
        for value in (1.0, 3.0, 2.0):
            run.samples.add("x_s", value)
        run.facts["machine_cpu_count"] = 2

    module.measure = measure  # type: ignore[attr-defined]
    module.results = lambda run: {"runs": 3, **run.samples.medians()}  # type: ignore[attr-defined]
    module.markdown = lambda results, run: f"## Fake\nx {results['x_s']}\n"  # type: ignore[attr-defined]
    module.terminal = lambda results: "x"  # type: ignore[attr-defined]
    module.stored = unchanged  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_section", module)
    return module


def run_fake(tmp_path: Path, report_only: bool = False) -> tuple[int, Path, Path]:
    section = Section("fake", "fake_section", str(tmp_path / ".lab-bench-fake"),
                      str(tmp_path / "fake-results.json"), "fake")
    md = tmp_path / "performance.md"
    code = section.run(Options(report_only=report_only), "python -m bench --section fake", md)
    return code, tmp_path / "fake-results.json", md


def test_a_section_writes_its_results_and_its_part(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        lab_commands: list[tuple[str, ...]]) -> None:
    fake_section(monkeypatch)
    (tmp_path / "performance.md").write_text(
        replace_section("# Benchmarks\nthe head\n", "fake", "old"))
    code, results_json, md = run_fake(tmp_path)
    assert code == 0
    results: dict[str, Any] = json.loads(results_json.read_text())
    assert results["x_s"] == 2.0 and results["runs"] == 3
    assert results["machine_cpu_count"] == 2
    assert results["command"] == "python -m bench --section fake"
    assert {"date", "machine_load_start", "machine_load_end"} <= set(results)
    assert "## Fake\nx 2.0" in md.read_text() and "old" not in md.read_text()
    assert md.read_text().startswith("# Benchmarks\nthe head\n")

    history = (tmp_path / "history.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in history] == [{**results, "section": "fake"}]

    results_json.write_text(json.dumps({**results, "x_s": 5.0}))
    assert run_fake(tmp_path, report_only=True)[0] == 0
    assert "x 5.0" in md.read_text()
    assert len((tmp_path / "history.jsonl").read_text().splitlines()) == 1  # not a new run
    assert lab_commands == [("down",)]  # the report alone brings no lab up


def test_a_failed_section_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         lab_commands: list[tuple[str, ...]]) -> None:
    fake_section(monkeypatch, fail=True)
    code, results_json, md = run_fake(tmp_path)
    assert code == 1
    assert not results_json.exists() and not md.exists()
