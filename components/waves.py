"""The rollout as Pulumi resources: each wave's batches registered after the gate of the
batch before, a gate after each batch of a gated wave (components.wave_gate), and an
approval gate in front of a wave that needs approval (components.approval_gate), as the
plan's wave steps say (fleet.waves). An `up` that knows a wave waits for approval
registers nothing of it or of the waves after it (rollout.approval)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from components.approval_gate import ApprovalGate
from components.spoke import Spoke
from components.wave_gate import WaveGate
from fleet import waves as planned_waves
from fleet.plan import FleetPlan, WaveStep
from lifecycle import wave_gate
from rollout.approval import WAITING_FOR_APPROVAL


def _changes(resources: list[pulumi.Resource],
             held_steps: Sequence[pulumi.Resource] = ()) -> pulumi.Output[str]:
    """A digest of what the resources hold after this run: it changes exactly when the
    run created or updated one of them (their uid and resourceVersion), or changed the
    CRDs a CRDs-first step holds (its digest)."""
    metas = [r.metadata for r in resources]  # type: ignore[attr-defined]
    digests = [s.digest for s in held_steps]  # type: ignore[attr-defined]

    def digest(values: list) -> str:
        h = hashlib.sha256()
        for meta in values[:len(metas)]:
            meta = meta or {}
            h.update(f"{meta.get('uid')}/{meta.get('resourceVersion')};".encode())
        for crds in values[len(metas):]:
            h.update(f"crds {crds};".encode())
        return h.hexdigest()

    return pulumi.Output.all(*metas, *digests).apply(digest)


@dataclass
class Registered:
    """What the waves registered: each spoke, when each is ready, each wave's gates; and
    the waves left out because the first of them waits for approval."""

    spokes: dict[str, Spoke] = field(default_factory=dict)
    ready: dict[str, pulumi.Output[bool]] = field(default_factory=dict)
    gates: dict[str, list[WaveGate]] = field(default_factory=dict)
    approval_gates: dict[str, ApprovalGate] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)

    def wave_output(self, step: WaveStep) -> dict[str, object]:
        out: dict[str, object] = {"spokes": list(step.spokes)}
        if self.left_out and step.name == self.left_out[0]:
            out["status"] = WAITING_FOR_APPROVAL
        elif not step.started or step.name in self.left_out:
            out["status"] = "NotStarted"
        elif step.stops_rollout:
            out["status"] = "Stopped"
        else:
            done = [g.id for g in self.gates[step.name]] + [
                self.ready[n] for n in step.spokes if n in self.spokes]
            out["status"] = pulumi.Output.all(*done).apply(lambda _: "Completed")
        return out

    def approvals_output(self, steps: tuple[WaveStep, ...],
                         recorded: Mapping[str, str] | None) -> dict[str, object]:
        """The `approvals` output: per wave, the digest its gate let through in this run
        (the gate's own, once its step passed); for a wave this run did not start, the one
        recorded before (the run fails, so its gate is kept as it was). A started wave
        without a gate has none once the run succeeds (the engine deletes it)."""
        out: dict[str, object] = {}
        for step in steps:
            gate = self.approval_gates.get(step.name)
            if gate is not None:
                out[step.name] = gate.changes
            elif (step.name in self.left_out or not step.started) and recorded \
                    and step.name in recorded:
                out[step.name] = recorded[step.name]
        return out


def register_waves(plan: FleetPlan, first: list[pulumi.Resource],
                   on_recorded: Callable[[str], None] | None = None,
                   stop_before: str | None = None,
                   parent: pulumi.Resource | None = None,
                   typed_held: Mapping[str, frozenset[str]] | None = None) -> Registered:
    """Registers the started waves in order, each batch after the gate of the one before,
    up to the wave `stop_before` (it waits for approval: neither it nor a later wave is
    registered, so they keep their objects). `on_recorded(spoke)` runs once a spoke's
    anchors are applied (components.spoke). `parent`: the component the fleet is
    registered in (the package's Fleet); None in the program, whose stack is the parent.
    `typed_held`: per spoke, the typed resources of held objects the state holds and
    would delete (fleet.held_typed)."""
    typed_held = typed_held or {}
    reg = Registered()
    after = first
    for step in plan.waves:
        reg.gates[step.name] = []
        if step.name == stop_before or reg.left_out:
            reg.left_out.append(step.name)
            continue
        if step.started and step.approval is not None:
            # The gate's keyword arguments are its inputs, by the same names.
            gate = ApprovalGate(step.approval.gate, **planned_waves.approval_inputs(step),
                                opts=pulumi.ResourceOptions(depends_on=after, parent=parent))
            reg.approval_gates[step.name] = gate
            after = [gate]
        for batch in step.batches:
            spokes = {name: Spoke(name, plan.spokes[name].install, after=after,
                                 on_recorded=on_recorded,  # type: ignore[arg-type]
                                 typed_held=typed_held.get(name, frozenset()),
                                 opts=pulumi.ResourceOptions(parent=parent) if parent else None)
                      for name in batch.spokes}
            reg.spokes.update(spokes)
            reg.ready.update({name: spoke.ready for name, spoke in spokes.items()})
            if not step.gated or not spokes:
                continue
            registered = [r for s in spokes.values() for r in s.registered]
            held_steps = [r for s in spokes.values() for r in s.held_steps]
            installs = {name: plan.spokes[name].install for name in spokes}
            gate = WaveGate(
                batch.gate,
                inputs=wave_gate.gate_inputs(step, batch, installs,
                                             _changes(registered, held_steps)),
                opts=pulumi.ResourceOptions(depends_on=[*registered, *held_steps],
                                            parent=parent))
            reg.gates[step.name].append(gate)
            for name in spokes:
                reg.ready[name] = gate.healthy.apply(
                    lambda healthy, n=name: bool((healthy or {}).get(n)))
            after = [gate]
    return reg
