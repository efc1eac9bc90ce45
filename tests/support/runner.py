"""`python -m runner` as the tests run it: a subprocess with the stacks' environment,
its JSON document read back."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lab.paths import REPO


def run_runner(*args: str, env: dict[str, str], timeout: float = 600) -> tuple[int, dict, str]:
    """`python -m runner ARGS --parallel 2 --json`: exit code, JSON document, progress."""
    proc = subprocess.run(
        [sys.executable, "-m", "runner", *args, "--parallel", "2", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"no JSON from the runner (exit {proc.returncode}):\n{proc.stdout}\n"
                    f"{proc.stderr}")
    return proc.returncode, doc, proc.stderr
