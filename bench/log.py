"""Progress of a benchmark that runs for an hour: one stderr line per step, timestamped,
so a stuck step shows where it stuck."""

from __future__ import annotations

import sys
from datetime import datetime


def log(message: str) -> None:
    """Progress on stderr, with the wall-clock time."""
    print(f"bench {datetime.now().strftime('%H:%M:%S')}: {message}", file=sys.stderr, flush=True)
