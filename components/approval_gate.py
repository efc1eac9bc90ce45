"""The approval gate in front of a wave with `approval: Required` (rollout.approval).

One dynamic resource per such wave; every resource of the wave depends on it, and the
waves after it depend on the wave. Its input `changes` is the digest of what the wave's
spokes are planned to run, the same in a preview, a review and an approved `up`, so
the gate is unchanged, and needs nothing, while the wave has nothing to change. When it
changes, its step (create or update, in `up` only) reads KNATIVE_FLEET_APPROVE in the
engine's environment and fails unless it names the wave: Pulumi then starts nothing
that depends on it and deletes nothing.

An `up` that already knows the wave waits (rollout.approval.waiting_wave) registers
neither the gate nor the wave: it fails by itself, after its outputs are recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pulumi

from components.dynamic_provider import DynamicProvider
from core.resource_types import APPROVAL_GATE

if TYPE_CHECKING:
    from fleet.plan import FleetPlan
    from rollout.approval import ApprovalStop


# Stack states name this class (`components.approval_gate._Provider`) and unpickle it:
# it keeps its module and name (components.dynamic_provider says why).
class _Provider(DynamicProvider):
    kind = APPROVAL_GATE

    def resource_id(self, props: dict[str, Any]) -> str:
        return str(props["wave"])

    def outs(self, props: dict[str, Any]) -> dict[str, Any]:
        """Create and update: the change lands only when the run is approved for it."""
        from core.settings import settings
        from rollout.approval import refusal

        why = refusal(props, settings().approved_waves)
        if why is not None:
            raise RuntimeError(why)
        return props


class ApprovalGate(pulumi.dynamic.Resource, module="knative-fleet", name=APPROVAL_GATE.name):
    """See the module docstring."""

    changes: pulumi.Output[str]

    def __init__(self, name: str, *, wave: str, changes: str, spokes: list[str],
                 later: list[str], opts: pulumi.ResourceOptions) -> None:
        super().__init__(_Provider(), name, {"wave": wave, "changes": changes,
                                             "spokes": spokes, "later": later}, opts)


# The program's side of the gate. Its imports are made here, not at the top: the dynamic
# provider's process imports this module to unpickle `_Provider` in every preview, and the
# plan's modules would make it load the Kubernetes client (components.dynamic_provider).
def read_approval_stop(plan: FleetPlan,
                       last_outputs: dict[str, Any] | None = None) -> ApprovalStop:
    """Where this run stops for an approval, known before it registers anything. Only an
    `up` with an approval gate looks at the stack's last outputs for it: `last_outputs`,
    the ones the pipeline already read for the owner id, else read here. A preview
    changes nothing and stops nowhere."""
    from core.settings import settings
    from rollout.approval import ApprovalStop, approval_stop

    if pulumi.runtime.is_dry_run() or not any(s.approval for s in plan.waves):
        return ApprovalStop()
    return approval_stop(plan.waves, settings().approved_waves,
                         _last_outputs() if last_outputs is None else last_outputs)


def _last_outputs() -> dict[str, Any] | None:
    """The outputs the stack's last recorded run left, or None when they cannot be read
    (then no wave is known to wait, and each gate's own step decides)."""
    from components.stack_identity import READ_STACK_OUTPUTS

    name = f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"
    try:
        found = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name})
    except Exception as exc:  # noqa: BLE001 - the gates still decide
        pulumi.log.debug(f"the approval record could not be read: {exc}")
        return None
    outputs = found.value.get("outputs") if found.is_known and isinstance(
        found.value, dict) else None
    return outputs if isinstance(outputs, dict) else None
