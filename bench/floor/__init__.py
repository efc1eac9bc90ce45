"""The Python SDK's floor under mocks against the program's targets.

As many resources as the program registers, with no inputs but a name, set against the
program's targets under mocks, and the product's no-op preview in a real run: why the
targets are out of reach with one Python resource per object
(bench/floor-results.json)."""

from __future__ import annotations

from typing import Any

from bench.floor import report
from bench.floor.design import RUNS
from bench.floor.measure import measure, pairs
from bench.floor.report import terminal
from bench.floor.summary import summarise
from bench.section import Run, unchanged

stored = unchanged  # its section reads its results alone
__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def results(run: Run) -> dict[str, Any]:
    return {"pairs": pairs(run.options), "runs": RUNS, **summarise(run.samples)}


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)
