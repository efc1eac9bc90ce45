"""One stack of 20 spokes, the recommended shard.

Install, state, no-op preview and destroy of one stack of 20 spokes (fewer with
--shard-spokes) with Pulumi as installed (diffs in the step loop, its log written) but
for the README's opt-in, `PULUMI_SKIP_CHECKPOINTS=true`, on install and destroy, which
docs/runner.md gives stacks of more than 5 spokes; CPU and peak memory per kind of
process, the state's bytes, the log's bytes, and the program under mocks at the same
size (bench/shard-results.json)."""

from __future__ import annotations

from typing import Any

from bench.section import Run
from bench.shard import report
from bench.shard.measure import measure, runs, spokes
from bench.shard.report import terminal
from bench.shard.summary import derive, summarise

__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def results(run: Run) -> dict[str, Any]:
    n = spokes(run.options)
    return {"runs": runs(run.options), "spokes": n, **summarise(run.samples, n)}


def stored(results: dict[str, Any]) -> dict[str, Any]:
    """Every derived figure comes from medians: derived again from a stored run's."""
    return derive(dict(results), results["spokes"])


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)
