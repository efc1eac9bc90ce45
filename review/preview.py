"""Getting the engine's preview as a document: from a file, or by running `pulumi preview
--json`. A failed preview (exit code != 0) is still a document, with its diagnostics:
that is the preview a reviewer most needs to read."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Preview:
    document: dict[str, Any]  # the `pulumi preview --json` document
    exit_code: int


def failed(document: Mapping[str, Any]) -> bool:
    """Whether the engine reported an error: the exit code a recorded preview had."""
    return any(d.get("severity") == "error" for d in document.get("diagnostics") or [])


def parse(text: str, stderr: str = "", exit_code: int = 0) -> dict[str, Any]:
    """The document from pulumi's stdout. When pulumi failed before the engine ran (no
    stack, no login) stdout holds no JSON; its stderr becomes an error diagnostic so
    the report still says why."""
    try:
        document = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        document = None
    if not isinstance(document, dict):
        message = (stderr or text).strip() or f"pulumi preview exited with {exit_code}"
        document = {"steps": [], "diagnostics": [{"severity": "error", "message": message}]}
    elif exit_code != 0 and not failed(document) and stderr.strip():
        document.setdefault("diagnostics", []).append(
            {"severity": "error", "message": stderr.strip()})
    return document


def load(path: str | Path) -> Preview:
    """A recorded preview (`.json` or `.json.gz`); its exit code is inferred from its
    error diagnostics, as pulumi exits 1 exactly when it reports one."""
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    document = parse(raw.decode("utf-8"))
    return Preview(document, 1 if failed(document) else 0)


def preview_command(stack: str, extra_args: Sequence[str] = ()) -> list[str]:
    return ["pulumi", "preview", "--json", "--stack", stack, "--non-interactive",
            *extra_args]


def run(stack: str, extra_args: Sequence[str] = (), cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None) -> Preview:
    """Runs the preview with the caller's environment (backend, passphrase, PATH to the
    toolchain's pulumi) and returns its document and exit code."""
    done = subprocess.run(preview_command(stack, extra_args), cwd=cwd, capture_output=True,
                          text=True, env=dict(os.environ if env is None else env),
                          check=False)
    return Preview(parse(done.stdout, done.stderr, done.returncode), done.returncode)
