"""The fleet planner: everything a run registers, decided without Pulumi (fleet.planner)."""

from fleet.plan import FleetPlan
from fleet.planner import plan_fleet

__all__ = ["FleetPlan", "plan_fleet"]
