"""What a spoke costs the machine that runs Pulumi: CPU and memory.

CPU seconds of the engine, the language host, the program and the providers, and
memory, for one stack of 1, 4 and 8 spokes, for 8 spokes as 2 stacks of 4 and 16 as 4
stacks of 4 through the fleet runner, and under the engine and provider settings that
could change them (bench/cost-results.json)."""

from __future__ import annotations

from typing import Any

from bench.cost import report
from bench.cost.measure import measure, runs
from bench.cost.report import terminal
from bench.cost.summary import derive, summarise
from bench.section import Run

__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def results(run: Run) -> dict[str, Any]:
    return {"runs": runs(run.options), **summarise(run.samples)}


def stored(results: dict[str, Any]) -> dict[str, Any]:
    """Every derived figure comes from medians: derived again from a stored run's."""
    return derive({k: v for k, v in results.items() if not k.startswith("target_")})


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)
