"""One run of a benchmark that writes a section of BENCHMARKS.md: its own lab up, its
measurements, its lab down (always), then its table on the terminal, its results file
and its section. `python -m bench.cost` and `python -m bench.levers` run this way."""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from bench.commands import Runner
from bench.design import BENCHMARKS_MD
from bench.fresh_lab import on_own_lab
from bench.log import log
from bench.machine import load_average
from bench.metrics import Samples
from lab.paths import REPO


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A terminated benchmark still tears its lab down (the `finally` runs)."""
    raise SystemExit(128 + signum)


def measure_and_write(
    *,
    command: str,
    lab_root: Path,
    measure: Callable[[Runner, Samples], dict[str, Any]],
    summarise: Callable[[Samples], dict[str, Any]],
    text_table: Callable[[dict[str, Any]], str],
    write: Callable[[dict[str, Any], Path, Path], None],
    results_json: Path,
    extra: dict[str, Any],
) -> int:
    """`measure` brings the lab up and returns the machine facts; 1 when it failed."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = load_average()
    runner = Runner(lab_root)
    samples = Samples()
    facts: dict[str, Any] = {}

    def work() -> None:
        facts.update(measure(runner, samples))

    if not on_own_lab(runner, work):
        return 1
    results = {"date": date, "command": command, **extra, **facts,
               "machine_load_start": load_start, "machine_load_end": load_average(),
               **summarise(samples)}
    print(text_table(results))
    write(results, results_json, BENCHMARKS_MD)
    log(f"wrote its section of {BENCHMARKS_MD.relative_to(REPO)} and "
        f"{results_json.relative_to(REPO)}")
    return 0
