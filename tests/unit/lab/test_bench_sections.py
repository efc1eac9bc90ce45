"""BENCHMARKS.md's marked sections: each benchmark replaces its own and keeps the others'."""

from __future__ import annotations

from pathlib import Path

from bench.sections import replace_section, section, write_keeping


def test_a_section_is_appended_then_replaced_in_place() -> None:
    text = replace_section("# Benchmarks\n\nfigures\n", "cost", "first")
    assert section(text, "cost") is not None and "first" in text
    again = replace_section(text + "\nafter\n", "cost", "second")
    assert "first" not in again and "second" in again
    assert again.index("second") < again.index("after")  # in place, not appended
    assert again.count("section cost: begin") == 1


def test_rewriting_the_file_keeps_the_other_benchmarks_section(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(replace_section("# Benchmarks\nold figures\n", "cost", "cost figures"))
    write_keeping(path, "# Benchmarks\nnew figures\n", ("cost",))
    text = path.read_text()
    assert "new figures" in text and "old figures" not in text
    assert "cost figures" in text


def test_rewriting_without_a_section_adds_none(tmp_path: Path) -> None:
    path = tmp_path / "BENCHMARKS.md"
    write_keeping(path, "# Benchmarks\n", ("cost",))
    assert path.read_text() == "# Benchmarks\n"
