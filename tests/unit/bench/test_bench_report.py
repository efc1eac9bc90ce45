"""The one writer of docs/performance.md's figures, the results files and the history:
each section replaces its own part and keeps the page's prose and every other section's
part, and each run adds one line to the history."""

from __future__ import annotations

import json
from pathlib import Path

from bench.report import (
    HISTORY,
    REPO,
    fmt_ratio,
    history_line,
    marked,
    recorded,
    replace_section,
    section,
    section_of,
    write,
)


def test_a_section_is_appended_then_replaced_in_place() -> None:
    text = replace_section("# Performance\n\nprose\n", "cost", "first")
    assert section(text, "cost") is not None and "first" in text
    again = replace_section(text + "\nafter\n", "cost", "second")
    assert "first" not in again and "second" in again
    assert again.index("second") < again.index("after")  # in place, not appended
    assert again.count("section cost: begin") == 1


def test_a_section_on_an_empty_page_is_the_page() -> None:
    assert replace_section("", "cost", "figures") == (
        "<!-- section cost: begin -->\nfigures\n<!-- section cost: end -->\n")


def test_writing_a_section_keeps_the_prose_and_the_other_sections(tmp_path: Path) -> None:
    path = tmp_path / "performance.md"
    page = replace_section("# Performance\n\nprose\n", "fleet", "old fleet figures")
    page = replace_section(page, "cost", "cost figures")
    path.write_text(replace_section(page, "floor", "floor figures") + "\nprose after\n")
    write({"a": 1}, "new fleet figures", "fleet", tmp_path / "results.json", path)
    text = path.read_text()
    assert text.startswith("# Performance\n\nprose\n") and text.endswith("\nprose after\n")
    assert "new fleet figures" in text and "old fleet figures" not in text
    assert "cost figures" in text and "floor figures" in text
    assert marked(text) == ["fleet", "cost", "floor"]  # in their order


def test_a_section_writes_its_results_and_its_part(tmp_path: Path) -> None:
    md, results = tmp_path / "performance.md", tmp_path / "x-results.json"
    write({"b": 1, "a": 2.5}, "## X\nfirst\n", "x", results, md)  # no page yet
    assert marked(md.read_text()) == ["x"]
    assert list(json.loads(results.read_text())) == ["a", "b"]  # sorted keys
    md.write_text("# Performance\nthe prose\n\n" + md.read_text())
    write({"a": 1}, "## X\nsecond\n", "x", results, md)
    text = md.read_text()
    assert text.startswith("# Performance\nthe prose\n")
    assert "second" in text and "first" not in text


def test_ratios_read_alike_in_every_section() -> None:
    assert fmt_ratio(None) == "n/a"
    assert fmt_ratio(1.2345) == "1.23x"


def test_a_results_file_names_its_section() -> None:
    from bench.__main__ import SECTIONS
    assert [section_of(Path(s.results_file)) for s in SECTIONS] == [s.name for s in SECTIONS]
    assert section_of(Path("/tmp/x-results.json")) == "x"


def test_a_run_is_one_line_of_the_history() -> None:
    line = history_line({"b": 1, "date": "2026-11-26 10:04 UTC"}, "cost")
    assert line.endswith("\n") and "\n" not in line[:-1]
    assert json.loads(line) == {"b": 1, "date": "2026-11-26 10:04 UTC", "section": "cost"}
    assert list(json.loads(line)) == ["b", "date", "section"]  # sorted keys
    assert recorded(line, "cost", "2026-11-26 10:04 UTC")
    assert not recorded(line, "floor", "2026-11-26 10:04 UTC")
    assert not recorded(line, "cost", "2026-11-27 10:04 UTC")
    assert not recorded(line, "cost", None)  # a run without a date is never another's
    assert not recorded("not json\n", "cost", "2026-11-26 10:04 UTC")


def test_each_run_is_appended_to_the_history_once(tmp_path: Path) -> None:
    md, history = tmp_path / "performance.md", tmp_path / HISTORY
    first = {"a": 1, "date": "2026-11-26 10:04 UTC"}
    write(first, "## X\n", "levers", tmp_path / "levers-results.json", md)
    write(first, "## X\n", "levers", tmp_path / "levers-results.json", md)  # --report-only
    write({"a": 2, "date": "2026-11-27 10:04 UTC"}, "## X\n", "levers",
          tmp_path / "levers-results.json", md)
    write({"c": 3, "date": "2026-11-27 11:00 UTC"}, "## Y\n", "cost-per-spoke",
          tmp_path / "cost-results.json", md)
    entries = [json.loads(line) for line in history.read_text().splitlines()]
    assert [(e["section"], e.get("a", e.get("c"))) for e in entries] == [
        ("levers", 1), ("levers", 2), ("cost", 3)]
    assert entries[-1] == {**json.loads((tmp_path / "cost-results.json").read_text()),
                           "section": "cost"}


def test_the_history_holds_every_results_file() -> None:
    """Each results file is its section's newest run, and the history has it."""
    history = (REPO / "bench" / HISTORY).read_text()
    entries = {(e["section"], e["date"]): e for e in map(json.loads, history.splitlines())}
    for results_json in sorted((REPO / "bench").glob("*results.json")):
        results = json.loads(results_json.read_text())
        entry = entries.get((section_of(results_json), results["date"]))
        assert entry is not None, results_json.name
        assert set(results) <= set(entry)
