"""The one writer of docs/performance.md's figures and the results files: each section
replaces its own part and keeps the page's prose and every other section's part."""

from __future__ import annotations

import json
from pathlib import Path

from bench.report import fmt_ratio, marked, replace_section, section, write


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
