"""From the levers section's samples to its figures: medians, and each setting against
the defaults pair by pair (the median of the per-pair ratios, so a machine that drifts
between pairs does not move the ratio)."""

from __future__ import annotations

import statistics
from typing import Any

from bench.cost.design import OPERATIONS
from bench.levers.design import FIGURES, REPORTED
from bench.metrics import Samples, rounded


def default_key(op: str, figure: str) -> str:
    return f"default_{op}_{figure}"


def lever_key(name: str, op: str, figure: str) -> str:
    return f"lever_{name}_{op}_{figure}"


def paired_ratio(mine: list[float], base: list[float]) -> float | None:
    ratios = [a / b for a, b in zip(mine, base, strict=False) if b]
    return statistics.median(ratios) if ratios else None


def summarise(samples: Samples) -> dict[str, Any]:
    out = samples.medians()
    for lever in REPORTED:
        for op in OPERATIONS:
            for figure in FIGURES:
                mine = samples.values.get(lever_key(lever.key, op, figure)) or []
                base = samples.values.get(default_key(op, figure)) or []
                out[f"{lever_key(lever.key, op, figure)}_vs_default"] = \
                    paired_ratio(mine, base)
    return rounded(out)
