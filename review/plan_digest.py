"""What a review planned, bound to what lands: the program's own digests of its plan
(fleet.reviewed), which the preview the review runs writes (KNATIVE_FLEET_PLAN_OUT), and
the review records in `report.json` under `plan` as written: the parts that bind the run
and the per-object detail its refusal names. An `up` given the review
(KNATIVE_FLEET_REVIEWED) computes them again before it registers anything and refuses
any other plan, so what a reviewer read is what lands.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

PLAN_OUT = "KNATIVE_FLEET_PLAN_OUT"
REVIEWED = "KNATIVE_FLEET_REVIEWED"
T = TypeVar("T")


def recording(run: Callable[[dict[str, str]], T]) -> tuple[T, dict[str, Any] | None]:
    """Runs `run(env)` (a preview) with KNATIVE_FLEET_PLAN_OUT set, and returns what it
    returned and the plan the program wrote (None when it wrote none: the program
    stopped before it had a plan)."""
    with tempfile.TemporaryDirectory(prefix="knative-fleet-plan-") as tmp:
        path = Path(tmp) / "plan.json"
        got = run({**os.environ, PLAN_OUT: str(path)})
        try:
            plan = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            plan = None
    return got, plan if isinstance(plan, dict) else None


def plan_line(plan: Mapping[str, Any] | None) -> str:
    """The report's last line: the digest `make apply` and `runner up --reviewed` hold
    the run to."""
    if not plan:
        return ("\n\n<sub>No plan digest: the preview stopped before the program planned "
                "the fleet, so this review cannot be applied with `make apply`.</sub>\n")
    parts = plan.get("parts") or {}
    return (f"\n\n<sub>Plan digest `{plan['digest']}` (stack `{plan.get('stack')}`, "
            f"{len(parts)} parts): `make apply` and `python -m runner up --reviewed` "
            "apply only this plan.</sub>\n")
