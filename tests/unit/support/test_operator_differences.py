"""The "differs from the operator" column of the spec table in docs/configuration.md and the
list under that table are the list the parity e2e holds the lab to
(tests/support/operator_differences.py)."""

from __future__ import annotations

from lab.paths import REPO
from tests.support.operator_differences import (
    EVERY,
    FROM_CODE,
    INSTALLS,
    KNOWN,
    NOT_COMPARED,
    differs_cell,
    every_object_lines,
    row_key,
)

HEADER = "| key | type | default | effect | operator equivalent | differs from the operator |"
CONFIGURATION = REPO / "docs" / "configuration.md"


def spec_table() -> dict[str, str]:
    """{row name: its last cell} of the spec table."""
    lines = CONFIGURATION.read_text().splitlines()
    start = lines.index(HEADER) + 2
    rows: dict[str, str] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[row_key(cells[0])] = cells[-1]
    return rows


def test_every_row_says_what_the_list_says() -> None:
    table = spec_table()
    assert len(table) > 40
    wrong = {row: (cell, differs_cell(row)) for row, cell in table.items()
             if cell != differs_cell(row)}
    assert not wrong, wrong


def test_every_listed_difference_has_its_row() -> None:
    table = spec_table()
    assert {k.row for k in KNOWN if k.row != EVERY} <= set(table)
    assert set(NOT_COMPARED) | set(FROM_CODE) <= set(table)


def test_the_list_under_the_table_is_the_every_object_list() -> None:
    text = CONFIGURATION.read_text()
    for line in every_object_lines():
        assert f"\n{line}\n" in text, line


def test_every_entry_names_installs_the_parity_tests_make() -> None:
    # An install name no test uses would keep its entry from ever being checked.
    wrong = [k for k in KNOWN if k.installs is not None and not k.installs <= INSTALLS]
    assert not wrong, wrong
    assert all(k.installs != frozenset() for k in KNOWN)
