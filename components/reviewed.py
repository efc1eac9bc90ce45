"""The program's own check that it registers the reviewed plan (fleet.reviewed), and
the record of its plan a review takes: both before anything is registered."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi

from core.settings import Settings, settings
from fleet.plan import FleetPlan
from fleet.reviewed import PlanDigest, plan_digest, refusal
from ownership.hold import RunHolds

# Said after a refusal of the plan made under the holds: taking them wrote to the spokes.
HOLDS_GIVEN_BACK = (
    "This run's first plan, made before it took its holds, was the reviewed one; its "
    "plan under the holds was refused, and the holds (a Lease on each spoke it changes) "
    "were given back.")


def _review(given: Settings) -> dict[str, Any]:
    """The report KNATIVE_FLEET_REVIEWED names; RunError when it cannot be read."""
    assert given.reviewed is not None
    try:
        report = json.loads(given.reviewed.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise pulumi.RunError(
            f"KNATIVE_FLEET_REVIEWED={given.reviewed}: cannot read the review ({exc}); "
            "nothing was registered or changed") from None
    return report if isinstance(report, dict) else {}


def _checked(plan: FleetPlan, given: Settings) -> PlanDigest:
    """The plan's digests, held to the review; RunError naming what differs."""
    assert given.reviewed is not None
    report = _review(given)
    fresh = plan_digest(plan, pulumi.get_stack(), detail=False)
    why = refusal(report, fresh, str(given.reviewed))
    if why is None:
        return fresh
    # Refused: the detail names what differs (computed only now: it costs a digest per object).
    raise pulumi.RunError(refusal(report, plan_digest(plan, fresh.stack),
                                  str(given.reviewed)) or why)


def hold_to_review(plan: FleetPlan) -> None:
    """Writes the plan's digests where KNATIVE_FLEET_PLAN_OUT says; raises RunError,
    before anything is registered, when KNATIVE_FLEET_REVIEWED names a review of
    another plan."""
    given = settings()
    if given.plan_out is not None:
        fresh = plan_digest(plan, pulumi.get_stack())
        given.plan_out.write_text(json.dumps(fresh.to_json(), indent=1) + "\n")
    if given.reviewed is None:
        return
    fresh = _checked(plan, given)
    pulumi.log.info(f"the reviewed plan ({fresh.digest}): {given.reviewed}")


def plan_held_to_review(plan: Callable[[RunHolds | None], FleetPlan],
                        holds: RunHolds | None) -> FleetPlan:
    """The run's plan (`plan(holds)`), held to the review KNATIVE_FLEET_REVIEWED names.

    Taking a hold writes a Lease on every spoke the run changes, so a run held to a
    review first plans without holds, as a preview does, and checks that plan: a stale
    review is refused with nothing written to any spoke. Only then does it plan again
    under its holds and check again, since a spoke may have changed in between; that
    refusal gives the holds back. Without a review, or in a preview (no holds), it
    plans once."""
    if holds is None or settings().reviewed is None:
        fleet = plan(holds)
        hold_to_review(fleet)
        return fleet
    _checked(plan(None), settings())
    fleet = plan(holds)
    try:
        hold_to_review(fleet)
    except pulumi.RunError as exc:
        holds.release_all()
        raise pulumi.RunError(f"{exc}\n{HOLDS_GIVEN_BACK}") from None
    except BaseException:
        holds.release_all()
        raise
    return fleet
