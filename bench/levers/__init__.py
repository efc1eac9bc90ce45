"""Engine and provider settings against the defaults, pair by pair.

A setting is kept or not by its measured effect on one spoke's install, no-op preview
and destroy against the defaults, run beside them in turn
(bench/levers-results.json)."""

from __future__ import annotations

from typing import Any

from bench.cost.measure import one_stack, with_variant
from bench.levers import report
from bench.levers.design import LEVERS, PAIRS, SPOKES, TOOLCHAIN_SCRIPT, stock_provider
from bench.levers.report import terminal
from bench.levers.summary import summarise
from bench.log import log
from bench.section import Options, Run, unchanged

stored = unchanged  # its section reads its results alone
__all__ = ["markdown", "measure", "results", "stored", "terminal"]


def pairs(options: Options) -> int:
    return options.pairs or PAIRS


def measure(run: Run) -> None:
    """The defaults, then each setting, on one fresh spoke, pair after pair."""
    stack = run.up(SPOKES, "levers")
    stock = run.bench.runner.run([str(TOOLCHAIN_SCRIPT), "--stock-provider"], stack.env)
    if not stock.ok:
        raise stock.fail("toolchain/build.sh --stock-provider")
    levers = [*LEVERS, stock_provider(stock.stdout.strip(), stack.env["PATH"])]
    for pair in range(1, pairs(run.options) + 1):
        log(f"pair {pair} of {pairs(run.options)}")
        one_stack(run.bench, stack, run.samples, SPOKES, "default")
        for lever in levers:
            with_variant(run.bench, stack, run.samples, lever, SPOKES, prefix="lever")


def results(run: Run) -> dict[str, Any]:
    return {"pairs": pairs(run.options), **summarise(run.samples)}


def markdown(results: dict[str, Any], run: Run) -> str:
    return report.markdown(results)
