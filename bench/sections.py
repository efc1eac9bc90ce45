"""BENCHMARKS.md holds the results of more than one benchmark: `python -m bench` writes
the file, `python -m bench.cost` writes one marked section of it. Each keeps what the
other wrote, so running one never loses the other's figures."""

from __future__ import annotations

import re
from pathlib import Path


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- section {name}: begin -->", f"<!-- section {name}: end -->"


def section(text: str, name: str) -> str | None:
    """The marked section `name` of `text`, markers included; None when there is none."""
    begin, end = _markers(name)
    found = re.search(re.escape(begin) + r".*?" + re.escape(end), text, re.DOTALL)
    return found.group(0) if found else None


def replace_section(text: str, name: str, body: str) -> str:
    """`text` with section `name` holding `body`: in place when it is there, else
    appended at the end."""
    begin, end = _markers(name)
    block = f"{begin}\n{body.strip()}\n{end}"
    old = section(text, name)
    if old is not None:
        return text.replace(old, block)
    return text.rstrip("\n") + "\n\n" + block + "\n"


def write_keeping(path: Path, text: str, names: tuple[str, ...]) -> None:
    """Writes `text` to `path`, carrying over the named sections of what was there."""
    old = path.read_text() if path.exists() else ""
    for name in names:
        kept = section(old, name)
        if kept is not None:
            inner = kept.split("\n", 1)[1].rsplit("\n", 1)[0]
            text = replace_section(text, name, inner)
    path.write_text(text)
