"""A run held to a review (KNATIVE_FLEET_REVIEWED) takes no hold before its plan is
found to be the reviewed one: it plans without holds and checks, then plans under its
holds and checks again, giving the holds back when that second check refuses. The
planner is a stand-in that returns prepared plans and records the holds it was given."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pulumi
import pytest

from components.reviewed import HOLDS_GIVEN_BACK, hold_to_review, plan_held_to_review
from config.fleet import parse_fleet_config
from fleet import FleetPlan, plan_fleet
from fleet.reviewed import plan_digest
from ownership.hold import RunHolds
from tests.support.factories import FakeInventory, profile, reviewed_fleet, reviewed_profiles


@pytest.fixture(autouse=True)
def _stack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pulumi, "get_stack", lambda: "prod")
    for name in ("KNATIVE_FLEET_REVIEWED", "KNATIVE_FLEET_PLAN_OUT"):
        monkeypatch.delenv(name, raising=False)


def config(**serving: object) -> dict:
    """Spokes a and b in group g (Serving 1.23) and solo (Serving 1.22)."""
    return reviewed_fleet(**serving)


PROFILES = reviewed_profiles()


def fleet(cfg: dict | None = None, profiles: list[dict] = PROFILES) -> FleetPlan:
    return plan_fleet(parse_fleet_config(cfg or config()), FakeInventory(profiles))


REVIEWED = fleet()
STALE = fleet(config(config={"network": {"domain-template": "x"}}))


class Planner:
    """plan_fleet as __main__ calls it: each call returns the next prepared plan."""

    def __init__(self, *plans: FleetPlan) -> None:
        self.plans: Iterator[FleetPlan] = iter(plans)
        self.holds: list[RunHolds | None] = []

    def __call__(self, holds: RunHolds | None) -> FleetPlan:
        self.holds.append(holds)
        return next(self.plans)


@pytest.fixture()
def holds() -> Any:
    return mock.create_autospec(RunHolds, instance=True)


@pytest.fixture()
def review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"stack": "prod",
                                "plan": plan_digest(REVIEWED, "prod").to_json()}))
    monkeypatch.setenv("KNATIVE_FLEET_REVIEWED", str(path))
    return path


def test_without_a_review_the_run_plans_once_under_its_holds(holds: Any):
    planner = Planner(STALE)
    assert plan_held_to_review(planner, holds) is STALE
    assert planner.holds == [holds]
    holds.release_all.assert_not_called()


@pytest.mark.usefixtures("review")
def test_a_preview_held_to_a_review_plans_once():
    planner = Planner(REVIEWED)
    assert plan_held_to_review(planner, None) is REVIEWED
    assert planner.holds == [None]
    with pytest.raises(pulumi.RunError, match="plans other changes than the review"):
        plan_held_to_review(Planner(STALE), None)


@pytest.mark.usefixtures("review")
def test_a_stale_review_is_refused_before_any_hold_is_taken(holds: Any):
    planner = Planner(STALE, REVIEWED)
    with pytest.raises(pulumi.RunError) as refused:
        plan_held_to_review(planner, holds)
    assert planner.holds == [None]  # the planner never had the holds: no Lease written
    holds.release_all.assert_not_called()
    why = str(refused.value)
    assert "nothing was registered or changed" in why
    assert "changed object: ConfigMap knative-serving/config-network" in why
    assert HOLDS_GIVEN_BACK not in why


@pytest.mark.usefixtures("review")
def test_the_reviewed_plan_is_planned_again_under_the_holds(holds: Any):
    planner = Planner(REVIEWED, fleet())
    got = plan_held_to_review(planner, holds)
    assert planner.holds == [None, holds]
    assert got is not REVIEWED and plan_digest(got, "prod") == plan_digest(REVIEWED, "prod")
    holds.release_all.assert_not_called()


@pytest.mark.usefixtures("review")
def test_a_spoke_that_changes_while_the_holds_are_taken_is_refused(holds: Any):
    relabelled = fleet(profiles=[profile("a", env="prod"), profile("b", env="staging"),
                                 profile("solo")])
    planner = Planner(REVIEWED, relabelled)
    with pytest.raises(pulumi.RunError) as refused:
        plan_held_to_review(planner, holds)
    assert planner.holds == [None, holds]
    holds.release_all.assert_called_once_with()
    why = str(refused.value)
    assert "reviewed, no longer planned: spoke b" in why
    assert why.endswith(HOLDS_GIVEN_BACK)


def test_an_unreadable_review_is_refused_without_holds(holds: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KNATIVE_FLEET_REVIEWED", str(tmp_path / "missing.json"))
    planner = Planner(REVIEWED, REVIEWED)
    with pytest.raises(pulumi.RunError, match="cannot read the review"):
        plan_held_to_review(planner, holds)
    assert planner.holds == [None]


def test_the_plan_a_review_records_carries_the_detail(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    out = tmp_path / "plan.json"
    monkeypatch.setenv("KNATIVE_FLEET_PLAN_OUT", str(out))
    hold_to_review(REVIEWED)
    written = json.loads(out.read_text())
    assert written == plan_digest(REVIEWED, "prod").to_json()
    assert "ConfigMap knative-serving/config-network" in written["detail"]["spoke a"]["objects"]
