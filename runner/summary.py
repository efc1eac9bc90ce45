"""The rollout's outcome for the person or the CI job that ran it: which stacks (and
which of their spokes) failed, which succeeded, which were never touched because an
earlier ring failed; as text and as JSON. The exit code is 0 only when every selected
stack ran and succeeded (and, for a drift check, found no drift).
"""

from __future__ import annotations

from typing import Any

from runner.plan import Rollout
from runner.progress import elapsed
from runner.results import FAILED, NOT_RUN, StackResult

OK, FAILED_EXIT = 0, 1
# Every stack that did not succeed stopped before a wave waiting for approval.
WAITING_APPROVAL_EXIT = 3
_ERROR_LINES = 6


def exit_code(rollout: Rollout) -> int:
    if rollout.ok:
        return OK
    if (rollout.failed and all(r.waiting_approval for r in rollout.failed)
            and not rollout.interrupted):
        return WAITING_APPROVAL_EXIT
    return FAILED_EXIT


def to_roll_back(rollout: Rollout) -> list[StackResult]:
    """The stacks `--rollback-on-failure` rolls back: those whose update failed. A stack
    that stopped before a wave waiting for approval applied what it was allowed to and
    waits for a person; rolling it back would undo the approved part of the change."""
    return [r for r in rollout.failed if not r.waiting_approval]


def to_json(rollout: Rollout, log_dir: str | None = None) -> dict[str, Any]:
    return {
        "operation": rollout.operation,
        "ok": rollout.ok,
        "interrupted": rollout.interrupted,
        "stoppedAtRing": rollout.stopped_at,
        "logDir": log_dir,
        "rings": [{"ring": ring.number,
                   "stacks": [rollout.results[n].to_json() for n in ring.names]}
                  for ring in rollout.rings],
        "failed": [r.stack for r in rollout.failed],
        "waitingApproval": [r.stack for r in rollout.failed if r.waiting_approval],
        "failedSpokes": {r.stack: r.failed_spokes for r in rollout.failed},
        "succeeded": [r.stack for r in rollout.succeeded],
        "drifted": [r.stack for r in rollout.drifted],
        "untouched": [r.stack for r in rollout.untouched],
    }


def _failure(result: StackResult) -> list[str]:
    spokes = ", ".join(result.failed_spokes) or "none named"
    lines = [f"  FAILED     {result.stack} ({elapsed(result.elapsed_s)}); spokes: {spokes}"]
    error = (result.error or "no error text").strip().splitlines()
    shown = error[:_ERROR_LINES]
    lines += [f"             {line}" for line in shown]
    if len(error) > len(shown):
        lines.append(f"             ... {len(error) - len(shown)} more lines")
    if result.log:
        lines.append(f"             log: {result.log}")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def render(rollout: Rollout, log_dir: str | None = None) -> str:
    lines = [f"Summary of {rollout.operation}:"]
    for ring in rollout.rings:
        results = [rollout.results[n] for n in ring.names]
        lines.append(f"ring {ring.number} ({_count(len(results), 'stack')}):")
        for result in results:
            if result.status == FAILED:
                lines += _failure(result)
            elif result.status == NOT_RUN:
                lines.append(f"  untouched  {result.stack}: {result.note}")
            else:
                word = "DRIFTED" if result.drifted else "succeeded"
                changes = ", ".join(f"{n} {op}" for op, n in sorted(result.changes.items())
                                    if n)
                note = f"; {result.note}" if result.note else ""
                lines.append(f"  {word:<9}  {result.stack} ({elapsed(result.elapsed_s)}"
                             f"{', ' + changes if changes else ''}){note}")
    failed, untouched = rollout.failed, rollout.untouched
    counts = [f"{len(rollout.succeeded)} succeeded", f"{len(failed)} failed",
              f"{len(untouched)} never touched"]
    if rollout.operation == "refresh":
        counts.append(f"{len(rollout.drifted)} drifted")
    lines.append(f"{rollout.operation}: " + ", ".join(counts) + ".")
    if rollout.stopped_at is not None and untouched:
        why = "interrupted" if rollout.interrupted else f"ring {rollout.stopped_at} failed"
        lines.append(f"Stopped at ring {rollout.stopped_at} ({why}); never touched: "
                     f"{', '.join(r.stack for r in untouched)}.")
    waiting = [r.stack for r in failed if r.waiting_approval]
    if waiting:
        lines.append(f"Waiting for approval: {', '.join(waiting)} (run again with "
                     "--approve WAVE once a person approved; README, 'Groups and waves').")
    if failed:
        spokes = sorted({s for r in failed for s in r.failed_spokes})
        lines.append(f"Failed stacks: {', '.join(r.stack for r in failed)}"
                     + (f"; failed spokes: {', '.join(spokes)}." if spokes else "."))
    if log_dir:
        lines.append(f"Logs: {log_dir}")
    return "\n".join(lines)


def render_rollback(results: dict[str, StackResult],
                    waiting: list[str] | tuple[str, ...] = ()) -> str:
    """What `--rollback-on-failure` did, stack by stack."""
    lines = ["Rollback of the failed ring:"]
    for name in sorted(results):
        r = results[name]
        if r.status == FAILED:
            error = (r.error or "no error text").strip().splitlines()
            lines.append(f"  NOT rolled back  {name}: {error[0] if error else ''}")
            lines += [f"                   {line}" for line in error[1:_ERROR_LINES]]
            if r.log:
                lines.append(f"                   log: {r.log}")
        elif r.changes or (r.note or "").startswith("rolled back"):
            changes = ", ".join(f"{n} {op}" for op, n in sorted(r.changes.items()) if n)
            lines.append(f"  rolled back  {name}: {r.note}"
                         + (f"; {changes}" if changes else ""))
        else:
            lines.append(f"  unchanged    {name}: {r.note}")
    for name in waiting:
        lines.append(f"  not rolled back  {name}: it waits for approval, nothing failed")
    return "\n".join(lines)
