"""The fleet's membership in the stack state: which spokes groups manage, so a run
that would uninstall one by surprise fails first (targeting.deselected).

Its check (`lifecycle.membership`) holds the last run's record (the state) against this
run's, in `pulumi preview` and in `pulumi up`, before any spoke changes: every resource
of the fleet depends on it. A spoke whose group does not allow the uninstall fails the
check with reason SpokeDeselected; the run then registers nothing more and, having
failed, deletes nothing. Only who is managed and by which group is diffed: label changes of
other ClusterProfiles do not show as changes.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult

from components.dynamic_provider import DynamicProvider
from core.resource_types import MEMBERSHIP, MEMBERSHIP_NAME
from lifecycle import membership


# Stack states name this class (`components.membership._Provider`) and unpickle it to
# run the check: it keeps its module and name (components.dynamic_provider says why).
class _Provider(DynamicProvider):
    kind = MEMBERSHIP

    def resource_id(self, props: dict[str, Any]) -> str:
        return MEMBERSHIP_NAME

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [CheckFailure(prop, why) for prop, why in membership.check(olds, news)]
        return CheckResult(news, failures)


class FleetMembership(pulumi.dynamic.Resource, module="knative-fleet",
                      name=MEMBERSHIP.name):
    """One per stack; see the module docstring."""

    def __init__(self, record: dict[str, Any],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(_Provider(), MEMBERSHIP_NAME, membership.membership_inputs(record),
                         opts)
