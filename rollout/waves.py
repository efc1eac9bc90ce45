"""Spokes into waves, waves into batches: the order a run changes the fleet in.

A spoke belongs to the first wave whose selector matches its ClusterProfile's
labels. Within a wave, spokes change together, at most `maxParallel` at a time
(batches in spoke-name order); the next batch or wave waits until the one before it
is healthy. Without `knative-fleet:rollout` the fleet is one wave, `all`, in which
every spoke changes at once, as before waves existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from config.fleet import FleetConfig
from config.rollout import DEFAULT_WAVE_TIMEOUT, Wave, duration_seconds
from core.errors import SelectionError
from targeting.selection import SelectedSpoke

ALL = "all"


@dataclass(frozen=True)
class WavePlan:
    """One wave with its spokes, in the order it runs in the fleet."""

    name: str
    index: int
    spokes: tuple[SelectedSpoke, ...]
    timeout_s: int
    max_failures: int
    max_parallel: int | None
    # False for the implicit wave of a stack without `rollout`: nothing to gate.
    gated: bool = True
    # `approval: Required`: the wave starts only in a run a person approved.
    approval_required: bool = False

    def batches(self) -> list[tuple[SelectedSpoke, ...]]:
        ordered = sorted(self.spokes, key=lambda s: s.entry.name)
        size = self.max_parallel or len(ordered) or 1
        return [tuple(ordered[i:i + size]) for i in range(0, len(ordered), size)]


def assign_waves(cfg: FleetConfig, spokes: Iterable[SelectedSpoke]) -> list[WavePlan]:
    """Every spoke in exactly one wave; a spoke no wave takes is a SelectionError."""
    spokes = list(spokes)
    if cfg.rollout is None:
        return [WavePlan(ALL, 0, tuple(spokes), duration_seconds(DEFAULT_WAVE_TIMEOUT), 0,
                         None, gated=False)]
    waves: list[Wave] = cfg.rollout.waves
    members: list[list[SelectedSpoke]] = [[] for _ in waves]
    left = []
    for spoke in spokes:
        i = next((i for i, w in enumerate(waves)
                  if w.selector is None or w.selector.matches(spoke.labels)), None)
        if i is None:
            left.append(spoke)
        else:
            members[i].append(spoke)
    if left:
        names = ", ".join(f"{s.entry.name} ({s.ref}, labels "
                          f"{','.join(f'{k}={v}' for k, v in sorted(s.labels.items())) or 'none'})"
                          for s in left)
        raise SelectionError(
            f"rollout.waves: no wave takes spoke(s) {names}. Nothing was changed. Fix: add "
            "a last wave without a selector (it takes every spoke left), or widen a wave's "
            "selector; see README 'Groups and waves'")
    return [WavePlan(w.name, i, tuple(members[i]), w.timeout_seconds, w.max_failures,
                     w.max_parallel, approval_required=w.approval == "Required")
            for i, w in enumerate(waves)]


def wave_of(waves: Sequence[WavePlan]) -> dict[str, WavePlan]:
    """Spoke name -> its wave."""
    return {s.entry.name: w for w in waves for s in w.spokes}
