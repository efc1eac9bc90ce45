"""The approval gate in front of a wave with `approval: Required` (rollout.approval).

One dynamic resource per such wave; every resource of the wave depends on it, and the
waves after it depend on the wave. Its input `changes` is the digest of what the wave's
spokes are planned to run, the same in a preview, a review and an approved `up`, so
the gate is unchanged, and needs nothing, while the wave has nothing to change. When it
changes, its step (create or update, in `up` only) reads KNATIVE_FLEET_APPROVE in the
engine's environment and fails unless it names the wave: Pulumi then starts nothing
that depends on it and deletes nothing.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.dynamic_provider import DynamicProvider
from core.resource_types import APPROVAL_GATE


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

    def __init__(self, name: str, *, wave: str, changes: str, spokes: list[str],
                 later: list[str], opts: pulumi.ResourceOptions) -> None:
        super().__init__(_Provider(), name, {"wave": wave, "changes": changes,
                                             "spokes": spokes, "later": later}, opts)
