"""The reviewed plan is the plan that lands: a digest of everything a run registers,
computed by the program itself before it registers anything.

A review (`python -m review`) records the digests of its preview's plan: one per
spoke (its install, its connection and the Kubernetes provider's configuration, or why
it cannot be reached) and one for the fleet (the stack, its ring, the membership, the
waves, their gates and what fails the run). An `up` given that review
(KNATIVE_FLEET_REVIEWED) computes the same digests from its own plan, and when any
differs it fails with nothing registered, naming what differs: a stack file edited, a
ClusterProfile relabelled, a release file changed at the release base, a spoke that
answers differently, all between the review and the apply, in the same process that
would have applied them, so nothing can slip in between a check and the apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.digest import digest
from fleet.plan import FleetPlan

FLEET = "fleet"


@dataclass(frozen=True)
class PlanDigest:
    """A run's plan as digests: the whole, and each part (`fleet`, `spoke <name>`)."""

    stack: str
    parts: dict[str, str]

    @property
    def digest(self) -> str:
        return digest({"stack": self.stack, "parts": self.parts})

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "digest": self.digest, "parts": dict(self.parts)}


def plan_digest(plan: FleetPlan, stack: str) -> PlanDigest:
    """The digests of one run's plan of one stack."""
    parts = {FLEET: digest({"ring": plan.ring, "showsWaves": plan.shows_waves,
                            "membership": plan.membership, "waves": plan.waves,
                            "failure": plan.failure})}
    for name, spoke in plan.spokes.items():
        parts[f"spoke {name}"] = digest(spoke)
    return PlanDigest(stack, dict(sorted(parts.items())))


class NotReviewed(ValueError):  # noqa: N818 - what the refused run says
    """The given review is not one this run can be held to."""


def _bare(stack: object) -> str:
    """`org/project/stack` or `stack` -> `stack`."""
    return str(stack).rsplit("/", 1)[-1]


def reviewed_digest(report: Mapping[str, Any], stack: str) -> PlanDigest:
    """The plan a review report (report.json) recorded for `stack`."""
    plan = report.get("plan")
    if not isinstance(plan, Mapping) or not isinstance(plan.get("parts"), Mapping):
        raise NotReviewed("it records no plan: only a live review does "
                          "(python -m review --stack NAME, not --offline or --from-json)")
    named = {_bare(report.get("stack")), _bare(plan.get("stack"))}
    if named != {_bare(stack)}:
        raise NotReviewed(f"it is the review of stack {report.get('stack')!r}, not {stack!r}")
    return PlanDigest(stack, {str(k): str(v) for k, v in plan["parts"].items()})


def differences(reviewed: PlanDigest, fresh: PlanDigest) -> list[str]:
    """Each part the fresh plan plans otherwise than the review, one line each."""
    lines = []
    for part in sorted(reviewed.parts.keys() | fresh.parts.keys()):
        old, new = reviewed.parts.get(part), fresh.parts.get(part)
        if old == new:
            continue
        what = "the fleet's membership, waves or gates" if part == FLEET else part
        if old is None:
            lines.append(f"not reviewed: {what} (new in this run)")
        elif new is None:
            lines.append(f"reviewed, no longer planned: {what}")
        else:
            lines.append(f"planned otherwise than reviewed: {what}")
    return lines


def refusal(report: Mapping[str, Any], fresh: PlanDigest, source: str) -> str | None:
    """Why this run must not register its plan under the review `source`, or None."""
    try:
        reviewed = reviewed_digest(report, fresh.stack)
    except NotReviewed as exc:
        return (f"the review {source} cannot be applied: {exc}. Nothing was registered "
                "or changed.")
    if reviewed.digest == fresh.digest:
        return None
    lines = "\n".join(f"  {line}" for line in differences(reviewed, fresh))
    return (f"stack {fresh.stack}: this run plans other changes than the review {source} "
            f"({fresh.digest[:19]}..., reviewed {reviewed.digest[:19]}...); nothing was "
            f"registered or changed:\n{lines}\nSomething changed after the review (the "
            "stack file, a ClusterProfile's labels, the release files, a spoke). Review "
            "the stack again (python -m review) and apply what that review shows.")
