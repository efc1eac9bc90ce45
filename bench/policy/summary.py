"""From the policy section's samples to its figures: medians, and the runs with the policy
against those without it, pair by pair."""

from __future__ import annotations

from typing import Any

from bench.cost.design import OPERATIONS
from bench.levers.summary import paired_ratio
from bench.metrics import Samples, rounded
from bench.policy.design import FIGURES


def summarise(samples: Samples) -> dict[str, Any]:
    out = samples.medians()
    for op in OPERATIONS:
        for figure in FIGURES:
            mine = samples.values.get(f"with_policy_{op}_{figure}") or []
            base = samples.values.get(f"without_policy_{op}_{figure}") or []
            out[f"with_policy_{op}_{figure}_vs_without"] = paired_ratio(mine, base)
    return rounded(out)
