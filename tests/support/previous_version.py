"""The previous version of the program, for upgrade tests: the project as it was just
before the newest commit that changed the program (git), written out to a directory."""

from __future__ import annotations

import ast
import io
import subprocess
import tarfile
from pathlib import Path

from lab.paths import REPO


def program_paths(repo: Path = REPO) -> list[str]:
    """What the Pulumi program is made of: `Pulumi.yaml`, `__main__.py` and every
    package of the repository it imports, directly or through another."""
    packages = {p.name for p in repo.iterdir() if (p / "__init__.py").is_file()}
    found: set[str] = set()
    todo, seen = [repo / "__main__.py"], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module
                     and node.level == 0 else [])
            for top in {n.split(".")[0] for n in names} & packages - found:
                found.add(top)
                todo.extend((repo / top).rglob("*.py"))
    return ["Pulumi.yaml", "__main__.py", *sorted(found)]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip()


def previous_commit() -> str:
    """The parent of the newest commit that changed the program."""
    newest = _git("log", "-1", "--format=%H", "--", *program_paths())
    if not newest:
        raise RuntimeError("git has no commit that changed the program (a shallow clone?)")
    return _git("rev-parse", f"{newest}^")


def write_out(commit: str, into: Path) -> Path:
    """The whole project at `commit`, written under `into` (git archive)."""
    data = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO, check=True,
                          capture_output=True).stdout
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        # Extraction filters came with 3.11.4; an archive of this repository is trusted.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)  # noqa: S202
    return into
