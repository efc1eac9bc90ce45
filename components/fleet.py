"""The whole fleet plan registered with Pulumi: the membership record first, then the
waves (components.waves), then the stack outputs; a plan that says the run must fail
(a spoke not resolved, a wave that stopped the rollout) fails it after registering
the reachable spokes, so their changes land and the engine deletes nothing
(fleet.waves.run_failure says why)."""

from __future__ import annotations

from collections.abc import Callable

import pulumi

from components.membership import FleetMembership
from components.spoke import Spoke
from components.waves import Registered, register_waves
from fleet.plan import FleetPlan, SpokePlan, WaveStep


def register_fleet(plan: FleetPlan,
                   on_recorded: Callable[[str], None] | None = None) -> dict[str, Spoke]:
    """Registers every reachable spoke, wave by wave; raises RunError at the end if the
    plan says the run fails. `on_recorded(spoke)`: once the spoke's anchors are applied
    (this run's hold on the spoke is given up then: ownership.hold)."""
    membership = FleetMembership(plan.membership)
    reg = register_waves(plan, [membership], on_recorded)
    outputs: dict[str, object] = {}
    for step in plan.waves:
        for name in step.spokes:
            outputs[name] = _spoke_output(plan.spokes[name], step, reg, plan.shows_waves)
    pulumi.export("ring", plan.ring)
    pulumi.export("spokes", outputs)
    if plan.shows_waves:
        pulumi.export("waves", {step.name: reg.wave_output(step) for step in plan.waves})
    for err in plan.errors:
        pulumi.log.error(str(err))
    if plan.failure is not None:
        raise pulumi.RunError(plan.failure)
    return reg.spokes


def _spoke_output(spoke: SpokePlan, step: WaveStep, reg: Registered,
                  shown_wave: bool) -> dict[str, object]:
    out: dict[str, object] = {
        "clusterProfile": spoke.cluster_profile,
        "targetClusterResolved": spoke.condition,
    }
    if spoke.group:
        out["group"] = spoke.group
    if shown_wave:
        out["wave"] = step.name
    registered = reg.spokes.get(spoke.name)
    if registered is None or spoke.connection is None:
        out["ready"] = False
        return out
    if shown_wave:
        pulumi.log.info(f"wave {step.name!r} ({step.index + 1} of the rollout)",
                        resource=registered)
    out.update({
        "server": spoke.connection.server,
        "kubernetesVersion": spoke.server_version,
        "serving": spoke.versions.get("serving"),
        "eventing": spoke.versions.get("eventing"),
        "ready": reg.ready[spoke.name],
    })
    return out
