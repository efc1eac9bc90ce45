"""The fleet's membership in the stack state: which spokes groups manage, so a run
that would uninstall one by surprise fails first (targeting.deselected).

Its `check` holds the last run's record (the state) against this run's, in
`pulumi preview` and in `pulumi up`, before any spoke changes: every resource of the
fleet depends on it. A spoke whose group does not allow the uninstall fails the check
with reason SpokeDeselected; the run then registers nothing more and, having failed,
deletes nothing. Only who is managed and by which group is diffed: label changes of
other ClusterProfiles do not show as changes.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ResourceProvider,
    UpdateResult,
)

from targeting.deselected import deselections

NAME = "fleet-membership"


class _Provider(ResourceProvider):
    KEYS = ("spokes", "groups")

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [CheckFailure("selection", d.message())
                    for d in deselections(olds or {}, news) if not d.uninstall]
        return CheckResult(news, failures)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=NAME, outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [k for k in self.KEYS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=news)


class FleetMembership(pulumi.dynamic.Resource, module="knative-fleet",
                      name="FleetMembership"):
    """One per stack; see the module docstring."""

    def __init__(self, record: dict[str, Any],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        spokes = record.get("spokes") or {}
        groups = sorted({s["group"] for s in spokes.values() if s.get("group")})
        summary = (f"{len(spokes)} spokes" + (f", groups {', '.join(groups)}" if groups else ""))
        super().__init__(_Provider(), NAME, {**record, "selection": summary}, opts)
