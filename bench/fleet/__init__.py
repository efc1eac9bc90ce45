"""knative-fleet against kubectl on released and patched Pulumi, growth, the mocked program.

One spoke's install, no-op review, one-key change and destroy with knative-fleet, on the
Pulumi binaries as released (the headline figures) and as the toolchain patches them,
each against the same objects with kubectl on another spoke, the growth from 1 to 4
spokes, and the program for 1, 10 and 100 spokes under mocks: its section of
docs/performance.md and bench/results.json."""

from __future__ import annotations

from typing import Any

from bench.fleet.design import GROWTH
from bench.fleet.measure import binaries, measure, runs
from bench.fleet.report import document, terminal
from bench.fleet.summary import summarise
from bench.section import Run

__all__ = ["markdown", "measure", "results", "terminal"]


def results(run: Run) -> dict[str, Any]:
    quick = run.options.quick
    return {"runs": runs(run.options), "quick": quick,
            "binaries": ",".join(binaries(run.options)),
            **summarise(run.samples, 1 if quick else GROWTH[-1])}


def markdown(results: dict[str, Any], run: Run) -> str:
    return document(results, run.samples, run.bench.runner.commands)
