"""The waves of this run as steps: which start, which batches each registers, what each
batch's gate counts as failed, and where the rollout stops (rollout.waves orders the
spokes; this decides what the run does with them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from fleet.plan import BatchStep, SpokePlan, WaveStep
from rollout.waves import WavePlan


def wave_steps(waves: list[WavePlan], spokes: Mapping[str, SpokePlan],
               approved: frozenset[str] = frozenset()) -> tuple[WaveStep, ...]:
    """A wave with more unreachable spokes than it allows still updates its reachable
    spokes, and the waves after it do not start. A wave that needs approval and is not
    in `approved` does not start, nor do the waves after it."""
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
        if wave.approval_required and wave.name not in approved:
            steps.append(WaveStep(**common, started=False, unreachable={}, batches=(),
                                  waiting_approval=True))
            stopped = True
            continue
        unreachable = {n: str(spokes[n].error) for n in names if spokes[n].error}
        step = WaveStep(**common, started=True, unreachable=unreachable, batches=())
        stopped = step.stops_rollout
        steps.append(replace(step, batches=_batches(wave, spokes, {} if stopped else unreachable)))
    return tuple(steps)


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
    if failed:
        names = ", ".join(f"{e.spoke} ({e.reason})" for e in failed)
        problems.append(
            f"{len(failed)} of {len(spokes)} spokes could not be resolved: {names}. "
            "Their resources were left untouched; the other spokes were updated.")
    stop = next((w for w in waves if w.started and w.stops_rollout), None)
    if stop is not None:
        later = [w for w in waves if not w.started]
        untouched = ", ".join(n for w in later for n in w.spokes) or "none"
        problems.append(
            f"wave {stop.name!r} stopped the rollout: {len(stop.unreachable)} of its "
            f"spokes are unreachable, more than its maxFailures ({stop.max_failures}): "
            f"{', '.join(stop.unreachable)}. Later waves were not started "
            f"({', '.join(w.name for w in later) or 'none'}; spokes: {untouched}); "
            "their objects are as they were.")
    waiting = next((w for w in waves if w.waiting_approval), None)
    if waiting is not None:
        later = [w for w in waves if not w.started and w is not waiting]
        problems.append(
            f"wave {waiting.name!r} waits for approval: it and the waves after it were not "
            f"started ({', '.join([waiting.name, *(w.name for w in later)])}; spokes: "
            f"{', '.join(n for w in [waiting, *later] for n in w.spokes) or 'none'}); their "
            f"objects are as they were. To approve, run again with "
            f"KNATIVE_FLEET_APPROVE={waiting.name} (or python -m runner up --approve "
            f"{waiting.name}).")
    return " ".join(problems) or None
