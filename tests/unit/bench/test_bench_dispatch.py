"""Which sections `python -m bench` runs for which arguments, and the options it refuses."""

from __future__ import annotations

import re

import pytest

from bench import __main__ as cli
from bench.cost.measure import runs as cost_runs
from bench.fleet.measure import runs as fleet_runs
from bench.floor.measure import pairs as floor_pairs
from bench.levers import pairs as levers_pairs
from bench.report import REPO, marked
from bench.section import Options, Section


def names(sections: tuple[Section, ...]) -> list[str]:
    return [s.name for s in sections]


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Options, str]]:
    """Every section `main` runs, with its options and command, instead of running it."""
    calls: list[tuple[str, Options, str]] = []

    def run(self: Section, options: Options, command: str) -> int:
        calls.append((self.name, options, command))
        return 1 if self.name == "cost" else 0  # cost fails

    monkeypatch.setattr(Section, "run", run)
    return calls


def test_without_a_section_the_fleet_section_runs_as_make_bench_did() -> None:
    assert names(cli.selected(None)) == ["fleet"]


@pytest.mark.parametrize(("argv", "expected"), [
    ([], ["fleet"]),
    (["--section", "cost"], ["cost"]),
    (["--section", "levers", "cost"], ["cost", "levers"]),  # in the sections' own order
    (["--section", "floor", "--section", "breakdown", "--section", "floor"],
     ["breakdown", "floor"]),
    (["--section", "all"], ["fleet", "cost", "breakdown", "levers", "floor", "policy",
                            "shard"]),
])
def test_the_sections_asked_for_run_each_once(argv: list[str], expected: list[str]) -> None:
    assert names(cli.selected(cli.parser().parse_args(argv).section)) == expected


def test_main_runs_each_section_with_the_whole_command(
        ran: list[tuple[str, Options, str]]) -> None:
    assert cli.main(["--section", "floor", "levers", "--pairs", "2"]) == 0
    assert [name for name, _, _ in ran] == ["levers", "floor"]
    assert all(options.pairs == 2 and options.runs is None for _, options, _ in ran)
    assert ran[0][2] == "python -m bench --section floor levers --pairs 2"


def test_a_failed_section_fails_the_run_after_the_others(
        ran: list[tuple[str, Options, str]]) -> None:
    assert cli.main(["--section", "all", "--runs", "1"]) == 1
    assert [name for name, _, _ in ran] == [
        "fleet", "cost", "breakdown", "levers", "floor", "policy", "shard"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--quick", "--section", "cost"], "--quick goes with --section fleet"),
    (["--pairs", "2"], "--pairs goes with --section levers or floor"),
    (["--section", "levers", "--no-16"], "--no-16 goes with --section cost"),
    (["--runs", "0"], "--runs must be at least 1"),
    (["--report-only"], "fleet cannot be written from its results"),
    (["--section", "nothing"], "invalid choice"),
    (["--section", "cost", "--binaries", "released"], "--binaries goes with --section fleet"),
    (["--binaries", "stock"], "give one or more of"),
    (["--binaries", ","], "give one or more of"),
    (["--shard-spokes", "2"], "--shard-spokes goes with --section shard"),
    (["--section", "shard", "--shard-spokes", "0"], "--shard-spokes must be at least 1"),
])
def test_options_for_no_section_that_runs_are_refused(
        argv: list[str], message: str, ran: list[tuple[str, Options, str]],
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert ran == []


@pytest.mark.parametrize(("argv", "expected"), [
    ([], None),  # the fleet section's own default: both
    (["--binaries", "patched"], ("patched",)),
    (["--binaries", "released,patched,released"], ("released", "patched")),
    (["--section", "fleet", "cost", "--binaries", "patched, released"],
     ("patched", "released")),
])
def test_the_fleet_section_gets_the_sets_of_binaries_asked_for(
        argv: list[str], expected: tuple[str, ...] | None,
        ran: list[tuple[str, Options, str]]) -> None:
    cli.main(argv)
    assert ran[0][0] == "fleet" and ran[0][1].binaries == expected


def test_report_only_is_for_the_sections_that_read_their_results_alone(
        ran: list[tuple[str, Options, str]]) -> None:
    rewrites = [s.name for s in cli.SECTIONS if s.rewrites]
    assert rewrites == ["cost", "breakdown", "levers", "floor", "policy", "shard"]
    cli.main(["--report-only", "--section", *rewrites])
    assert all(options.report_only for _, options, _ in ran)


def test_a_child_runs_no_section(monkeypatch: pytest.MonkeyPatch,
                                 ran: list[tuple[str, Options, str]],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    import bench.program
    monkeypatch.setattr(bench.program, "floor_child", lambda n: {"resources": n})
    assert cli.main(["--floor-child", "7"]) == 0
    assert capsys.readouterr().out == '{"resources": 7}\n'
    assert ran == []


def test_each_section_has_its_own_lab_results_file_and_part() -> None:
    for field in ("name", "lab_dir", "results_file", "marker"):
        values = [getattr(s, field) for s in cli.SECTIONS]
        assert len(set(values)) == len(values), field
    assert all(s.lab_dir.startswith(".lab-bench") for s in cli.SECTIONS)
    page = (REPO / "docs" / "performance.md").read_text()
    # Each section that has run (its results file is there) has its part, in the sections'
    # order; a section's first run appends its part at the end of the page.
    has_run = [s for s in cli.SECTIONS if (REPO / "bench" / s.results_file).exists()]
    assert marked(page) == [s.marker for s in has_run]


def test_every_section_has_its_make_target() -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([\w -]+):", makefile, re.M))
    declared = {t for line in targets for t in line.split()}
    assert {"bench", *(f"bench-{s.name}" for s in cli.SECTIONS[1:])} <= declared


def test_an_option_not_given_is_each_section_own_default() -> None:
    assert (fleet_runs(Options()), cost_runs(Options())) == (3, 1)
    assert (levers_pairs(Options()), floor_pairs(Options())) == (3, 5)
    assert fleet_runs(Options(runs=1)) == cost_runs(Options(runs=1)) == 1


def test_the_shard_section_gets_its_spokes_and_runs(
        ran: list[tuple[str, Options, str]]) -> None:
    assert cli.main(["--section", "shard", "--shard-spokes", "2", "--runs", "2"]) == 0
    assert [(name, options.shard_spokes, options.runs) for name, options, _ in ran] == [
        ("shard", 2, 2)]
