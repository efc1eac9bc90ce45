# ruff: noqa: UP045 - the host analyses `Optional[X]`; it refuses unions (`X | None`)
# The host's rules for a component (pulumi.provider.experimental): an annotated `args`,
# no `from __future__ import annotations` here.
"""The fleet as a component for every Pulumi language: `knative-fleet:index:Fleet`, served
by the package's provider (package/). Its inputs are a stack file's `knative-fleet:`
config (components.fleet_args), run through the program's own pipeline
(components.pipeline); its outputs are the program's stack outputs, which the calling
program exports under the same names (the stack's owner id is read back from its
`ownerId` output, and an approval from its `approvals`)."""

import asyncio
from typing import Any, Optional

import pulumi
from pulumi.runtime.stack import wait_for_rpcs

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
        failures: list[str] = []
        try:
            deploy_fleet(stack_config_of(args), export=outputs.__setitem__, parent=self,
                         fail=failures.append)
        except pulumi.RunError as exc:
            # Nothing is registered yet. Raised here, so that the traceback the host
            # appends is this one line.
            raise pulumi.RunError(str(exc)) from None
        for key, attr in (("spokes", "spokes"), ("waves", "waves"),
                          ("approvals", "approvals"), ("ring", "ring"),
                          ("ownerId", "owner_id")):
            setattr(self, attr, pulumi.Output.from_input(outputs.get(key)))
        self.register_outputs(outputs)
        if failures:
            # The run fails as the program's does, after the reachable spokes' changes
            # are applied: a construct that raised now would drop registrations still
            # on their way to the engine.
            self.spokes = fails_once_registered("\n".join(failures))


def fails_once_registered(message: str) -> pulumi.Output[Any]:
    """An output that fails with `message` once every registration this process sent
    is answered (the engine applied it); the host awaits it for the construct's reply."""
    async def fail() -> Any:
        await wait_for_rpcs(await_all_outstanding_tasks=False)
        raise pulumi.RunError(message)

    loop = asyncio.get_event_loop()
    known, secret = loop.create_future(), loop.create_future()
    known.set_result(True)
    secret.set_result(False)
    return pulumi.Output(set(), asyncio.ensure_future(fail()), known, secret)
