"""The program's own check that it registers the reviewed plan (fleet.reviewed), and
the record of its plan a review takes: both before anything is registered."""

from __future__ import annotations

import json

import pulumi

from core.settings import settings
from fleet.plan import FleetPlan
from fleet.reviewed import plan_digest, refusal


def hold_to_review(plan: FleetPlan) -> None:
    """Writes the plan's digests where KNATIVE_FLEET_PLAN_OUT says; raises RunError,
    before anything is registered, when KNATIVE_FLEET_REVIEWED names a review of
    another plan."""
    given = settings()
    if given.plan_out is None and given.reviewed is None:
        return
    fresh = plan_digest(plan, pulumi.get_stack())
    if given.plan_out is not None:
        given.plan_out.write_text(json.dumps(fresh.to_json(), indent=1) + "\n")
    if given.reviewed is None:
        return
    try:
        report = json.loads(given.reviewed.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise pulumi.RunError(
            f"KNATIVE_FLEET_REVIEWED={given.reviewed}: cannot read the review ({exc}); "
            "nothing was registered or changed") from None
    why = refusal(report if isinstance(report, dict) else {}, fresh, str(given.reviewed))
    if why is not None:
        raise pulumi.RunError(why)
    pulumi.log.info(f"the reviewed plan ({fresh.digest}): {given.reviewed}")
