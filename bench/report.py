"""The one writer of the benchmark's results. Each section's figures go to its results file
(bench/*results.json, sorted keys) and to its part of docs/performance.md: the text
between its markers, `<!-- section NAME: begin -->` and `<!-- section NAME: end -->`.
A section replaces its own part in place (or appends it at the end of the page when the
page has none) and leaves the rest of the page, the prose and every other section's part,
as it is, so running one never loses another's figures. Each run is also appended to the
history beside the results files (bench/history.jsonl): one JSON line, its results and its
section's name. Nothing between the markers, in a results file or in the history is typed
by hand."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from lab.paths import REPO

PERFORMANCE_MD = REPO / "docs" / "performance.md"
PROG = "python -m bench"
HISTORY = "history.jsonl"
_BEGIN = re.compile(r"<!-- section ([\w-]+): begin -->")


def command_line(argv: list[str]) -> str:
    """How a result was made, as a person would type it."""
    return shlex.join([*PROG.split(), *argv])


def fmt(key: str, value: Any) -> str:
    """A figure with the unit its key names."""
    if value is None:
        return "n/a"
    if isinstance(value, bool | str):
        return str(value)
    if key.endswith("_bytes") or "_bytes_" in key:
        return f"{value / 1_000_000:.2f} MB"
    if key.endswith("_s"):
        return f"{value:.1f} s"
    if key.endswith("_pct"):
        return f"{value:.0f} %"
    if key.startswith("program_ms") or key.endswith("_ms") or "_ms_" in key:
        return f"{value:.0f} ms"
    if "ratio" in key or "_vs_" in key:
        return f"{value:.2f}x"
    return f"{value:g}" if isinstance(value, float) else str(value)


def fmt_ratio(value: float | None) -> str:
    """A ratio as every table shows one."""
    return "n/a" if value is None else f"{value:.2f}x"


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- section {name}: begin -->", f"<!-- section {name}: end -->"


def section(text: str, name: str) -> str | None:
    """The marked section `name` of `text`, markers included; None when there is none."""
    begin, end = _markers(name)
    found = re.search(re.escape(begin) + r".*?" + re.escape(end), text, re.DOTALL)
    return found.group(0) if found else None


def marked(text: str) -> list[str]:
    """The names of the marked sections in `text`, in order."""
    return _BEGIN.findall(text)


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with section `name` holding `body`: in place when it is there, else
    appended at the end."""
    begin, end = _markers(name)
    block = f"{begin}\n{body.strip()}\n{end}"
    old = section(text, name)
    if old is not None:
        return text.replace(old, block)
    if not text.strip():
        return block + "\n"
    return text.rstrip("\n") + "\n\n" + block + "\n"


def section_of(results_json: Path) -> str:
    """The section a results file belongs to, by its name: `results.json` is the fleet
    section's, `NAME-results.json` is section NAME's."""
    name = results_json.name
    if name == "results.json":
        return "fleet"
    return name.removesuffix("-results.json") if name.endswith("-results.json") \
        else results_json.stem


def history_line(results: dict[str, Any], section_name: str) -> str:
    """A run's line in the history: its `results`, as its results file holds them, with
    `section` its section's name, as one line of JSON (sorted keys)."""
    return json.dumps({**results, "section": section_name}, sort_keys=True) + "\n"


def recorded(history: str, section_name: str, date: str | None) -> bool:
    """Whether the history, whose text is `history`, holds the run of that section
    started at `date` already (its part written again from its results file:
    `--report-only`). A run without a date is never taken for another."""
    if date is None:
        return False
    for line in history.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("section") == section_name \
                and entry.get("date") == date:
            return True
    return False


def write(results: dict[str, Any], markdown: str, marker: str, results_json: Path,
          page: Path = PERFORMANCE_MD) -> None:
    """The results file, the section's part of `page` (docs/performance.md): the text
    between the markers named `marker`, and the run's line in the history beside the
    results file (once a run)."""
    results_json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    old = page.read_text() if page.exists() else ""
    page.write_text(replace_section(old, marker, markdown))
    history = results_json.parent / HISTORY
    name = section_of(results_json)
    text = history.read_text() if history.exists() else ""
    if not recorded(text, name, results.get("date")):
        with history.open("a") as out:
            out.write(("\n" if text and not text.endswith("\n") else "")
                      + history_line(results, name))
