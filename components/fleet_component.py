# ruff: noqa: UP045 - the host analyses `Optional[X]`; it refuses unions (`X | None`)
# The host's rules for a component (pulumi.provider.experimental): an annotated `args`,
# no `from __future__ import annotations` here.
"""The fleet as a component for every Pulumi language: `knative-fleet:index:Fleet`, served
by the package's provider (package/). Its inputs are a stack file's `knative-fleet:`
config (components.fleet_args), run through the program's own pipeline
(components.pipeline); its outputs are the program's stack outputs, which the calling
program exports under the same names (the stack's owner id is read back from its
`ownerId` output, and an approval from its `approvals`)."""

from typing import Any, Optional

import pulumi

from components.fleet_args import FleetArgs, stack_config_of
from components.pipeline import deploy_fleet

FLEET_TYPE = "knative-fleet:index:Fleet"


class Fleet(pulumi.ComponentResource):
    """Knative Serving and Eventing on every spoke of a ClusterProfile fleet: the inputs
    are what a knative-fleet stack file says under `knative-fleet:`; export the outputs
    under their own names (`ownerId` at least: it is the stack's identity on its spokes)."""

    spokes: pulumi.Output[dict[str, Any]]
    """Per spoke: its ClusterProfile, `targetClusterResolved`, server, versions, ready."""
    waves: pulumi.Output[Optional[dict[str, Any]]]
    """Per wave (with a rollout): its spokes and status."""
    approvals: pulumi.Output[Optional[dict[str, Any]]]
    """What each approval gate last let through (with a rollout)."""
    ring: pulumi.Output[int]
    """The stack's rollout ring."""
    owner_id: pulumi.Output[str]
    """The stack's owner id, recorded on its spokes."""

    def __init__(self, name: str, args: FleetArgs,
                 opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(FLEET_TYPE, name, {}, opts)
        outputs: dict[str, object] = {}
        try:
            deploy_fleet(stack_config_of(args), export=outputs.__setitem__, parent=self)
        except pulumi.RunError as exc:
            # Raised here, so that the traceback the host appends is this one line.
            raise pulumi.RunError(str(exc)) from None
        finally:
            for key, attr in (("spokes", "spokes"), ("waves", "waves"),
                              ("approvals", "approvals"), ("ring", "ring"),
                              ("ownerId", "owner_id")):
                setattr(self, attr, pulumi.Output.from_input(outputs.get(key)))
            self.register_outputs(outputs)
