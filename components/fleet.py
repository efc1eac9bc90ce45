"""The whole fleet plan registered with Pulumi: the membership record first, then the
waves (components.waves), then the stack outputs; a plan that says the run must fail
(a spoke not resolved, a wave that stopped the rollout) fails it after registering
the reachable spokes, so their changes land and the engine deletes nothing
(fleet.waves.run_failure says why). An `up` that stops before a wave waiting for
approval fails the same way, so its outputs are recorded (rollout.approval)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi

from components.approval_gate import read_approval_stop
from components.membership import FleetMembership
from components.spoke import Spoke
from components.waves import Registered, register_waves
from fleet.held_typed import HELD_OUTPUT, held, keeps_typed
from fleet.plan import FleetPlan, SpokePlan, WaveStep
from rollout.approval import APPROVALS_OUTPUT

Export = Callable[[str, object], None]


def register_fleet(plan: FleetPlan,
                   on_recorded: Callable[[str], None] | None = None,
                   export: Export | None = None,
                   parent: pulumi.Resource | None = None,
                   fail: Callable[[str], None] | None = None,
                   typed_held: Mapping[str, frozenset[str]] | None = None,
                   last_outputs: dict[str, Any] | None = None) -> dict[str, Spoke]:
    """Registers every reachable spoke, wave by wave; raises RunError at the end if the
    plan says the run fails or a wave waits for approval. `on_recorded(spoke)`: once the
    spoke's anchors are applied (this run's hold on the spoke is given up then:
    ownership.hold). `export(name, value)` takes each output (the program's stack
    outputs: pulumi.export); `parent` is the component the fleet is registered in (the
    package's Fleet), None in the program. `fail(message)` instead of the RunError: the
    component fails its construct only once what was registered is applied.
    `typed_held`: per spoke, the typed resources of held objects the state holds and
    would delete (components.held_typed). `last_outputs`: the stack's last outputs, when the caller
    has read them (the approval record is read from them, not once more)."""
    export = export or pulumi.export
    typed_held = typed_held or {}
    stop = read_approval_stop(plan, last_outputs)
    membership = FleetMembership(
        plan.membership, pulumi.ResourceOptions(parent=parent) if parent else None)
    reg = register_waves(plan, [membership], on_recorded,
                         stop.waiting.name if stop.waiting else None, parent, typed_held)
    outputs: dict[str, object] = {}
    for step in plan.waves:
        for name in step.spokes:
            last = stop.spokes.get(name) if step.name in reg.left_out else None
            outputs[name] = _spoke_output(plan.spokes[name], step, reg, plan.shows_waves,
                                          last)
    export("ring", plan.ring)
    # Typed resources of spokes this run leaves out (a wave waiting for approval, a
    # spoke not reached) stay as they are: only a run that registered every spoke says
    # `typedHeld` (fleet.held_typed).
    typed = sum(s.typed_registered for s in reg.spokes.values())
    export(HELD_OUTPUT, held(typed) if not keeps_typed(plan) and not reg.left_out
           and all(name in reg.spokes for name in plan.spokes) else False)
    export("spokes", outputs)
    if plan.shows_waves:
        export("waves", {step.name: reg.wave_output(step) for step in plan.waves})
        export(APPROVALS_OUTPUT, reg.approvals_output(plan.waves, stop.recorded))
    for err in plan.errors:
        pulumi.log.error(str(err))
    failure = "\n".join(f for f in (plan.failure, stop.message) if f)
    if failure and fail:
        fail(failure)
    elif failure:
        raise pulumi.RunError(failure)
    return reg.spokes


def _spoke_output(spoke: SpokePlan, step: WaveStep, reg: Registered, shown_wave: bool,
                  last: Any = None) -> dict[str, object]:
    """A spoke's entry of the `spokes` output. A spoke of a wave this run left out (it
    waits for approval, or comes after one that does) runs what the last recorded run
    left it, `last`: its versions and readiness are that run's."""
    out: dict[str, object] = {
        "clusterProfile": spoke.cluster_profile,
        "targetClusterResolved": spoke.condition,
    }
    if spoke.group:
        out["group"] = spoke.group
    if shown_wave:
        out["wave"] = step.name
    registered = reg.spokes.get(spoke.name)
    if step.name in reg.left_out and spoke.connection is not None:
        last = last if isinstance(last, Mapping) else {}
        out.update({
            "server": spoke.connection.server,
            "kubernetesVersion": spoke.server_version,
            "serving": last.get("serving"),
            "eventing": last.get("eventing"),
            "ready": last.get("ready") is True,
        })
        return out
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
