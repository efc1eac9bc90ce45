"""The waves of this run as steps: which start, which batches each registers, what each
batch's gate counts as failed, and where the rollout stops (rollout.waves orders the
spokes; this decides what the run does with them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from fleet.plan import ApprovalStep, BatchStep, SpokePlan, WaveStep
from rollout.approval import gate_name, wave_digest
from rollout.waves import WavePlan


def wave_steps(waves: list[WavePlan], spokes: Mapping[str, SpokePlan]
               ) -> tuple[WaveStep, ...]:
    """A wave with more unreachable spokes than it allows still updates its reachable
    spokes, and the waves after it do not start. A wave that needs approval is planned
    as every other, behind its approval gate (rollout.approval): whether the run may
    change it is decided by the gate's step in `up`, so every run plans the same."""
    steps: list[WaveStep] = []
    stopped = False
    for i, wave in enumerate(waves):
        names = tuple(s.entry.name for s in wave.spokes)
        common = {"name": wave.name, "index": wave.index, "spokes": names,
                  "gated": wave.gated, "timeout_s": wave.timeout_s,
                  "max_failures": wave.max_failures,
                  "later": tuple(w.name for w in waves[i + 1:])}
        if stopped:
            steps.append(WaveStep(**common, started=False, unreachable={}, batches=()))
            continue
        unreachable = {n: str(spokes[n].error) for n in names if spokes[n].error}
        step = WaveStep(**common, started=True, unreachable=unreachable, batches=(),
                        approval=_approval(wave.name, names, spokes)
                        if wave.approval_required else None)
        stopped = step.stops_rollout
        steps.append(replace(step, batches=_batches(wave, spokes, {} if stopped else unreachable)))
    return tuple(steps)


def approval_inputs(step: WaveStep) -> dict[str, Any]:
    """The inputs of the approval gate in front of a started wave that needs approval:
    the one definition the registrar (components.waves, as the gate's keyword
    arguments) and the offline review both use."""
    approval = step.approval
    assert approval is not None
    return {"wave": step.name, "changes": approval.changes,
            "spokes": list(approval.spokes), "later": list(step.later)}


def _approval(wave: str, names: tuple[str, ...],
              spokes: Mapping[str, SpokePlan]) -> ApprovalStep | None:
    """The wave's approval gate, over its reached spokes; none for a wave that reaches
    none (it changes nothing)."""
    installs = {n: spokes[n].install for n in names if spokes[n].install is not None}
    if not installs:
        return None
    return ApprovalStep(gate_name(wave), wave_digest(installs), tuple(sorted(installs)))


def _batches(wave: WavePlan, spokes: Mapping[str, SpokePlan],
             unreachable: Mapping[str, str]) -> tuple[BatchStep, ...]:
    """Each batch's reached spokes and its gate; the gate counts the batch's spokes of
    `unreachable` as failed (none for a stopped wave: they fail the run already, and its
    gate checks the health of the others)."""
    batches = wave.batches()
    return tuple(
        BatchStep(f"wave-{wave.name}" + (f"-{b + 1}" if len(batches) > 1 else ""),
                  tuple(s.entry.name for s in batch if not spokes[s.entry.name].error),
                  {s.entry.name: unreachable[s.entry.name] for s in batch
                   if s.entry.name in unreachable})
        for b, batch in enumerate(batches))


def run_failure(spokes: Mapping[str, SpokePlan], waves: tuple[WaveStep, ...]) -> str | None:
    """Why the run must fail once the reachable spokes are registered, or None.

    Pulumi deletes resources a successful program did not register; a run that fails
    after registering the healthy spokes lets their changes land while the engine skips
    every delete, so a spoke that cannot be reached keeps all of its objects."""
    failed = [s.error for s in spokes.values() if s.error is not None]
    problems = []
    stop = next((w for w in waves if w.started and w.stops_rollout), None)
    if failed:
        names = ", ".join(f"{e.spoke} ({e.reason})" for e in failed)
        others = ("the other spokes were updated" if stop is None else
                  "the other spokes of the waves that ran "
                  f"({', '.join(w.name for w in waves if w.started)}) were updated")
        problems.append(
            f"{len(failed)} of {len(spokes)} spokes could not be resolved: {names}. "
            f"Their resources were left untouched; {others}.")
    if stop is not None:
        later = [w for w in waves if not w.started]
        untouched = ", ".join(n for w in later for n in w.spokes) or "none"
        problems.append(
            f"wave {stop.name!r} stopped the rollout: {len(stop.unreachable)} of its "
            f"spokes are unreachable, more than its maxFailures ({stop.max_failures}): "
            f"{', '.join(stop.unreachable)}. Later waves were not started "
            f"({', '.join(w.name for w in later) or 'none'}; spokes: {untouched}); "
            "their objects are as they were.")
    return " ".join(problems) or None
