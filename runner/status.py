"""The fleet-wide view: per stack and per spoke, the ring, whether the spoke's
ClusterProfile resolved (and why not), the Knative versions installed, whether every
Deployment is ready, and the stack's last update; per stack, the wave that waits for
approval.

Read only from what the stacks already keep: their outputs (`ring`, `spokes`, `waves`,
written by the program on every update that registered its spokes, including one that
stopped before a wave waiting for approval: rollout.approval) and the first page of
their history. Nothing is stored for the view, so it can never disagree with the
stacks; it is as fresh as each stack's last update (run `refresh` for what the clusters
hold now).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rollout.approval import WAITING_FOR_APPROVAL
from runner.results import command_error_text
from runner.selection import StackFile

COLUMNS = ("STACK", "RING", "SPOKE", "RESOLVED", "REASON", "SERVING", "EVENTING", "READY",
           "LAST UPDATE")


@dataclass(frozen=True)
class SpokeStatus:
    spoke: str
    cluster_profile: str | None
    resolved: str | None  # "True" / "False", the targetClusterResolved condition's status
    reason: str | None
    message: str | None
    serving: str | None
    eventing: str | None
    ready: bool | None
    group: str | None = None
    wave: str | None = None
    wave_status: str | None = None  # the `waves` output's status of its wave

    def to_json(self) -> dict[str, Any]:
        return {"spoke": self.spoke, "clusterProfile": self.cluster_profile,
                "resolved": self.resolved, "reason": self.reason, "message": self.message,
                "serving": self.serving, "eventing": self.eventing, "ready": self.ready,
                "group": self.group, "wave": self.wave, "waveStatus": self.wave_status}


@dataclass
class StackStatus:
    stack: str
    ring: int
    exists: bool = True
    last_update: dict[str, Any] | None = None  # kind, result, startTime, endTime, version
    spokes: list[SpokeStatus] = field(default_factory=list)
    error: str | None = None  # the stack could not be read
    waves: dict[str, str | None] = field(default_factory=dict)  # wave -> its status

    @property
    def waiting_approval(self) -> list[str]:
        """The waves whose change waits for a person's approval (at most one: the run
        stops before it)."""
        return [w for w, status in self.waves.items() if status == WAITING_FOR_APPROVAL]

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "ring": self.ring, "exists": self.exists,
                "lastUpdate": self.last_update, "error": self.error,
                "waves": dict(self.waves), "waitingApproval": self.waiting_approval,
                "spokes": [s.to_json() for s in self.spokes]}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def spoke_status(name: str, out: Any, waves: Any = None) -> SpokeStatus:
    """One spoke from the `spokes` output (README, "Outputs"), and its wave's status
    from the `waves` output."""
    out = out if isinstance(out, Mapping) else {}
    waves = waves if isinstance(waves, Mapping) else {}
    wave = waves.get(out.get("wave"))
    cond = out.get("targetClusterResolved")
    cond = cond if isinstance(cond, Mapping) else {}
    ready = out.get("ready")
    return SpokeStatus(
        spoke=name, cluster_profile=_text(out.get("clusterProfile")),
        resolved=_text(cond.get("status")), reason=_text(cond.get("reason")),
        message=_text(cond.get("message")), serving=_text(out.get("serving")),
        eventing=_text(out.get("eventing")), ready=ready if isinstance(ready, bool) else None,
        group=_text(out.get("group")), wave=_text(out.get("wave")),
        wave_status=_text(wave.get("status")) if isinstance(wave, Mapping) else None)


def stack_status(stack: StackFile, outputs: Mapping[str, Any] | None,
                 last_update: Mapping[str, Any] | None) -> StackStatus:
    """A stack's view from its outputs (None: the stack is not in the backend) and its
    last history entry. The ring is the one its last update exported, else the one its
    stack file says."""
    if outputs is None:
        return StackStatus(stack.name, stack.ring, exists=False)
    ring = outputs.get("ring")
    spokes = outputs.get("spokes")
    spokes = spokes if isinstance(spokes, Mapping) else {}
    waves = outputs.get("waves")
    waves = waves if isinstance(waves, Mapping) else {}
    return StackStatus(
        stack=stack.name, ring=ring if isinstance(ring, int) and ring >= 1 else stack.ring,
        last_update=dict(last_update) if last_update else None,
        spokes=[spoke_status(n, spokes[n], waves) for n in sorted(spokes)],
        waves={str(n): _text(w.get("status")) if isinstance(w, Mapping) else None
               for n, w in waves.items()})


def update_json(summary: Any) -> dict[str, Any]:
    """An Automation API `UpdateSummary` as plain data; its times are UTC (the SDK
    parses Pulumi's `...Z` stamps into naive datetimes)."""
    def stamp(value: datetime | None) -> str | None:
        return value.isoformat() + "Z" if value else None
    return {"kind": summary.kind, "result": summary.result, "version": summary.version,
            "startTime": stamp(summary.start_time), "endTime": stamp(summary.end_time)}


def read_stack(project_dir: Path, stack: StackFile) -> StackStatus:
    """Reads one stack's outputs and last update through the Automation API."""
    from pulumi import automation as auto

    try:
        try:
            handle = auto.select_stack(stack.name, work_dir=str(project_dir))
        except auto.StackNotFoundError:
            return stack_status(stack, None, None)
        outputs = {k: ("[secret]" if v.secret else v.value)
                   for k, v in handle.outputs().items()}
        history = handle.history(page_size=1, show_secrets=False)
        return stack_status(stack, outputs, update_json(history[0]) if history else None)
    except Exception as exc:  # noqa: BLE001 - one unreadable stack must not hide the fleet
        return StackStatus(stack.name, stack.ring, error=command_error_text(exc, tail=3))


def read_fleet(project_dir: Path, stacks: list[StackFile], parallel: int) -> list[StackStatus]:
    """Every stack's view, read `parallel` at a time (each read is a few CLI calls)."""
    if not stacks:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(stacks)))) as pool:
        return list(pool.map(lambda s: read_stack(project_dir, s), stacks))


def _last(update: Mapping[str, Any] | None) -> str:
    if not update:
        return "never"
    when = (update.get("endTime") or update.get("startTime") or "")[:19].replace("T", " ")
    when = f"{when} UTC" if when else ""
    # Self-managed backends number no update (version 0); Pulumi Cloud does.
    version = f" #{update['version']}" if update.get("version") else ""
    return f"{update.get('kind')} {update.get('result')} {when}{version}".strip()


def _yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def rows(statuses: list[StackStatus]) -> list[tuple[str, ...]]:
    """The table's rows: one per spoke, one for a stack with no spoke to show."""
    out: list[tuple[str, ...]] = []
    for st in sorted(statuses, key=lambda s: (s.ring, s.stack)):
        last = _last(st.last_update)
        if st.error:
            out.append((st.stack, str(st.ring), "-", "-", "cannot read (below)", "-", "-",
                        "-", "-"))
        elif not st.exists:
            out.append((st.stack, str(st.ring), "-", "-", "not created", "-", "-", "-",
                        "never"))
        elif not st.spokes:
            out.append((st.stack, str(st.ring), "-", "-", "no spokes", "-", "-", "-", last))
        for sp in st.spokes if st.exists and not st.error else []:
            resolved = {"True": "yes", "False": "NO"}.get(sp.resolved or "", sp.resolved or "-")
            ready = (f"waiting for approval ({sp.wave})"
                     if sp.wave_status == WAITING_FOR_APPROVAL else _yes_no(sp.ready))
            out.append((st.stack, str(st.ring), sp.spoke, resolved, sp.reason or "-",
                        sp.serving or "-", sp.eventing or "-", ready, last))
    return out


def totals(statuses: list[StackStatus]) -> dict[str, int]:
    spokes = [sp for st in statuses for sp in st.spokes]
    return {"stacks": len(statuses),
            "notCreated": sum(not st.exists for st in statuses),
            "unreadable": sum(st.error is not None for st in statuses),
            "spokes": len(spokes),
            "resolved": sum(sp.resolved == "True" for sp in spokes),
            "ready": sum(sp.ready is True for sp in spokes),
            "waitingApproval": sum(sp.wave_status == WAITING_FOR_APPROVAL for sp in spokes)}


def waiting_line(st: StackStatus) -> str | None:
    """The line under the table that names a stack's wave waiting for approval, and the
    waves its run did not start after it (a run stops at one wave at most: no other
    wave is NotStarted then)."""
    if not st.waiting_approval:
        return None
    wave = st.waiting_approval[0]
    later = [n for n, status in st.waves.items() if status == "NotStarted"]
    spokes = [sp.spoke for sp in st.spokes if sp.wave == wave]
    return (f"{st.stack}: wave '{wave}' waits for approval (spokes: "
            f"{', '.join(spokes) or 'none'}"
            + (f"; not started after it: {', '.join(later)}" if later else "")
            + f"): once a person approved, run its up again with --approve {wave}")


def render_table(statuses: list[StackStatus]) -> str:
    table = [COLUMNS, *rows(statuses)]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in table]
    t = totals(statuses)
    for st in sorted(statuses, key=lambda s: (s.ring, s.stack)):
        if st.error:
            lines.append(f"cannot read {st.stack}: " + st.error.replace("\n", " "))
        waiting = waiting_line(st)
        if waiting and st.exists and not st.error:
            lines.append(waiting)
    lines.append(f"{t['stacks']} stacks ({t['notCreated']} not created, {t['unreadable']} "
                 f"unreadable), {t['spokes']} spokes: {t['resolved']} resolved, "
                 f"{t['ready']} ready"
                 + (f", {t['waitingApproval']} waiting for approval"
                    if t["waitingApproval"] else ""))
    return "\n".join(lines)


def to_json(statuses: list[StackStatus]) -> dict[str, Any]:
    ordered = sorted(statuses, key=lambda s: (s.ring, s.stack))
    return {"stacks": [s.to_json() for s in ordered], "totals": totals(statuses)}
