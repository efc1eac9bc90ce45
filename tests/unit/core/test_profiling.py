"""The program's CPU profile on request: off by default, written when the process ends."""

from __future__ import annotations

import pstats
import subprocess
import sys
from pathlib import Path

from core.profiling import PROFILE_ENV, profile_if_asked
from lab.paths import REPO

WORK = "from core.profiling import profile_if_asked\nprofile_if_asked()\n" \
       "def busy():\n    return sum(i * i for i in range(200_000))\nbusy()\n"


def test_off_unless_asked() -> None:
    assert profile_if_asked({}) is None
    assert profile_if_asked({PROFILE_ENV: ""}) is None


def test_the_profile_is_written_when_the_process_ends(tmp_path: Path) -> None:
    out = tmp_path / "program.prof"
    subprocess.run([sys.executable, "-c", WORK], cwd=REPO, check=True,
                   env={PROFILE_ENV: str(out), "PYTHONPATH": str(REPO)})
    names = {name for (_, _, name) in pstats.Stats(str(out)).stats}  # type: ignore[attr-defined]
    assert "busy" in names
