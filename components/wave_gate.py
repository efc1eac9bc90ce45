"""The health gate between waves: the next wave (or batch) of spokes starts only when
this one is healthy.

One dynamic resource per wave batch depends on every resource of the batch's spokes;
everything of the next batch depends on it. Its `changes` input is a digest of those
resources' applied versions, so it runs exactly when a run changed something in the
batch (and `pulumi preview` shows it as an update then). When it runs, it waits up to
the wave's timeout for every Deployment of the install on each spoke to be rolled out
and Available (`lifecycle.wave_gate`); more failing spokes than `maxFailures`
(unreachable ones included) fail it, so Pulumi starts nothing that depends on it: later
waves keep their objects, in the clusters and in the state, as they were.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.dynamic_provider import DynamicProvider
from core.resource_types import WAVE_GATE


# Stack states name this class (`components.wave_gate._Provider`) and unpickle it to
# run the gate: it keeps its module and name (components.dynamic_provider says why).
class _Provider(DynamicProvider):
    kind = WAVE_GATE

    def resource_id(self, props: dict[str, Any]) -> str:
        return str(props["wave"])

    def outs(self, props: dict[str, Any]) -> dict[str, Any]:
        """The inputs and the wait's verdict: create and update run the wait."""
        from lifecycle import wave_gate

        return {**props, **wave_gate.await_wave(props)}


class WaveGate(pulumi.dynamic.Resource, module="knative-fleet", name=WAVE_GATE.name):
    """Succeeds when the batch is healthy enough (see the module docstring)."""

    healthy: pulumi.Output[dict]

    def __init__(self, name: str, *, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: lifecycle.wave_gate.gate_inputs, its spokes (how to reach each)
        marked secret here; `healthy` and `failures` are declared as the outputs the
        wait adds (a None input is not sent to the engine)."""
        super().__init__(
            _Provider(), name,
            {**inputs, "spokes": pulumi.Output.secret(inputs["spokes"]),
             "healthy": None, "failures": None},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["spokes"])))
