"""The ring rule, as pure functions: rings run in ascending order; a ring's stacks run
together; the next ring starts only when every stack of this ring succeeded, so the
first failed ring stops the rollout and every later stack is never touched.

Rings bound the blast radius of a change, as the program's waves do inside a stack.
Only operations that change spokes stop (`up`, `destroy`); a preview or a drift check
changes nothing, so it goes on and reports every ring. How a ring's stacks are run
(processes, at most N at once) is runner.execution's; here it is a function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from runner.results import FAILED, MUTATING, NOT_RUN, SUCCEEDED, StackResult, not_run
from runner.selection import StackFile


@dataclass(frozen=True)
class Ring:
    number: int
    stacks: tuple[StackFile, ...]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.stacks]


class Interrupted(Exception):  # noqa: N818 - it is what happened, not a failure of ours
    """The user stopped the run (Ctrl-C) while a ring ran; `results` holds what that
    ring's stacks gave (the ones that were stopped as failed)."""

    def __init__(self, results: dict[str, StackResult]) -> None:
        super().__init__("interrupted")
        self.results = results


RunRing = Callable[[Ring], dict[str, StackResult]]


def rings(stacks: Iterable[StackFile]) -> list[Ring]:
    """The stacks grouped by ring, rings ascending, stacks by name within a ring."""
    by_ring: dict[int, list[StackFile]] = {}
    for stack in stacks:
        by_ring.setdefault(stack.ring, []).append(stack)
    return [Ring(n, tuple(sorted(by_ring[n], key=lambda s: s.name))) for n in sorted(by_ring)]


def stops_rollout(operation: str, results: Iterable[StackResult]) -> bool:
    """Whether a ring with these results stops the rollout."""
    return operation in MUTATING and any(r.status == FAILED for r in results)


@dataclass
class Rollout:
    """The outcome of one run over the rings: every selected stack has a result."""

    operation: str
    rings: list[Ring]
    results: dict[str, StackResult] = field(default_factory=dict)
    stopped_at: int | None = None  # the ring whose failure stopped the rollout
    interrupted: bool = False

    def _with(self, status: str) -> list[StackResult]:
        return [self.results[n] for ring in self.rings for n in ring.names
                if self.results[n].status == status]

    @property
    def failed(self) -> list[StackResult]:
        return self._with(FAILED)

    @property
    def succeeded(self) -> list[StackResult]:
        return self._with(SUCCEEDED)

    @property
    def untouched(self) -> list[StackResult]:
        return self._with(NOT_RUN)

    @property
    def drifted(self) -> list[StackResult]:
        return [r for r in self.succeeded if r.drifted]

    @property
    def ok(self) -> bool:
        return not self.failed and not self.untouched and not self.drifted


def run_rollout(operation: str, ordered: list[Ring], run_ring: RunRing) -> Rollout:
    """Runs ring after ring with `run_ring` until one stops the rollout; the stacks of
    later rings get a `not-run` result saying why. A stack that `run_ring` did not
    report is a failure: nothing may pass for success unseen."""
    rollout = Rollout(operation, ordered)
    for ring in ordered:
        if rollout.stopped_at is not None:
            why = ("interrupted before this ring started" if rollout.interrupted else
                   f"ring {rollout.stopped_at} failed, so ring {ring.number} was not started")
            for stack in ring.stacks:
                rollout.results[stack.name] = not_run(stack.name, ring.number, operation, why)
            continue
        try:
            got = run_ring(ring)
        except Interrupted as stop:
            got = stop.results
            rollout.interrupted = True
        for stack in ring.stacks:
            rollout.results[stack.name] = got.get(stack.name) or StackResult(
                stack.name, ring.number, operation, FAILED,
                error="the runner got no result for this stack")
        ring_results = [rollout.results[n] for n in ring.names]
        if rollout.interrupted or stops_rollout(operation, ring_results):
            rollout.stopped_at = ring.number
    return rollout
