"""Where one install's and one no-op preview's time goes.

The spoke's API requests by verb and resource against kubectl's for the same objects,
the engine's CPU by Go package (`pulumi preview --profiling`, read with `go tool
pprof`), the provider's calls per kind of object, and the Python program's CPU by area
(cProfile: of the real program through `KNATIVE_FLEET_PROFILE`, and under mocks)
(bench/breakdown-results.json)."""

from __future__ import annotations

from typing import Any

from bench.breakdown import report
from bench.breakdown.measure import measure
from bench.section import Run, unchanged

stored = unchanged  # its section reads its results alone
__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def results(run: Run) -> dict[str, Any]:
    """Its figures are facts of the run, not samples."""
    return {}


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)


def terminal(results: dict[str, Any]) -> str:
    return report.markdown(results)
