"""The health gate between waves: the next wave (or batch) of spokes starts only when
this one is healthy.

One dynamic resource per wave batch depends on every resource of the batch's spokes;
everything of the next batch depends on it. Its `changes` input is a digest of those
resources' applied versions, so it runs exactly when a run changed something in the
batch (and `pulumi preview` shows it as an update then). When it runs, it waits up to
the wave's timeout for every Deployment of the install on each spoke to be rolled out
and Available (`rollout.health`); more failing spokes than `maxFailures` (unreachable
ones included) fail it, so Pulumi starts nothing that depends on it: later waves keep
their objects, in the clusters and in the state, as they were.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

# The name the stack state's pickled providers call at create and update time.
from rollout.wave_wait import await_wave


class _Provider(ResourceProvider):
    KEYS = ("wave", "spokes", "unreachable", "changes", "timeoutSeconds", "maxFailures")

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=str(props["wave"]), outs={**props, **await_wave(props)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [k for k in self.KEYS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs={**news, **await_wave(news)})


class WaveGate(pulumi.dynamic.Resource, module="knative-fleet", name="WaveGate"):
    """Succeeds when the batch is healthy enough (see the module docstring)."""

    healthy: pulumi.Output[dict]

    def __init__(self, name: str, *, wave: str, spokes: dict[str, Any],
                 unreachable: dict[str, str], changes: pulumi.Input[str], timeout_s: int,
                 max_failures: int, later: list[str], plugin_timeout_s: float,
                 opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            _Provider(), name,
            {"wave": wave, "spokes": pulumi.Output.secret(spokes), "unreachable": unreachable,
             "changes": changes, "timeoutSeconds": timeout_s, "maxFailures": max_failures,
             "later": later, "pluginTimeoutSeconds": plugin_timeout_s,
             "healthy": None, "failures": None},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["spokes"])))
