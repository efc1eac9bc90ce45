"""The one writer of BENCHMARKS.md and the results files: each section replaces its own
part and keeps every other section's."""

from __future__ import annotations

import json
from pathlib import Path

from bench.report import fmt_ratio, marked, replace_section, section, write, write_keeping


def test_a_section_is_appended_then_replaced_in_place() -> None:
    text = replace_section("# Benchmarks\n\nfigures\n", "cost", "first")
    assert section(text, "cost") is not None and "first" in text
    again = replace_section(text + "\nafter\n", "cost", "second")
    assert "first" not in again and "second" in again
    assert again.index("second") < again.index("after")  # in place, not appended
    assert again.count("section cost: begin") == 1


def test_rewriting_the_file_keeps_the_other_sections(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    old = replace_section("# Benchmarks\nold figures\n", "cost", "cost figures")
    path.write_text(replace_section(old, "floor", "floor figures"))
    write_keeping(path, "# Benchmarks\nnew figures\n")
    text = path.read_text()
    assert "new figures" in text and "old figures" not in text
    assert "cost figures" in text and "floor figures" in text
    assert marked(text) == ["cost", "floor"]  # in their order


def test_rewriting_without_a_section_adds_none(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_keeping(path, "# Benchmarks\n")
    assert path.read_text() == "# Benchmarks\n"


def test_a_section_writes_its_results_and_its_part(tmp_path: Path) -> None:
    md, results = tmp_path / "BENCHMARKS.md", tmp_path / "x-results.json"
    write({"b": 1, "a": 2.5}, "## X\nfirst\n", "x", results, md)  # no file yet
    assert md.read_text().startswith("# Benchmarks\n")
    assert list(json.loads(results.read_text())) == ["a", "b"]  # sorted keys
    write({"a": 1}, "# Benchmarks\nthe head\n", None, tmp_path / "head.json", md)
    write({"a": 1}, "## X\nsecond\n", "x", results, md)
    text = md.read_text()
    assert text.startswith("# Benchmarks\nthe head\n")
    assert "second" in text and "first" not in text


def test_ratios_read_alike_in_every_section() -> None:
    assert fmt_ratio(None) == "n/a"
    assert fmt_ratio(1.2345) == "1.23x"
