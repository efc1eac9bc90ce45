"""Pieces of toolchain/build.sh for tests that run the script's own shell functions."""

from __future__ import annotations

from lab.paths import REPO

BUILD_SCRIPT = REPO / "toolchain" / "build.sh"


def shell_function(name: str) -> str:
    """One shell function of build.sh: a one-line one, or up to its closing brace."""
    script = BUILD_SCRIPT.read_text()
    start = script.index(f"\n{name}() {{") + 1
    line_end = script.index("\n", start)
    if script[start:line_end].rstrip().endswith("}"):
        return script[start:line_end + 1]
    return script[start:script.index("\n}\n", start) + 3]
