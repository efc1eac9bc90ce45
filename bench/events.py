"""The Pulumi engine's event log, followed while a command runs and analysed afterwards:
where an install or destroy spends its time (before the first object, on objects, after
the last), per kind, and how many steps run at once."""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from bench.metrics import EventAnalysis
from bench.polling import Poller

Event = tuple[float, dict]  # (seconds since the command's start, the event)


class EventTail(Poller):
    """Follows a `pulumi --event-log` file while the command runs (the CLI writes each
    event as it happens) and stamps every event with the seconds since `start`: the
    log's own timestamps have whole-second resolution only. Use as a context manager."""

    def __init__(self, path: Path, start: float, interval: float = 0.05) -> None:
        super().__init__(interval)
        self.path = path
        self.start = start
        self.events: list[Event] = []
        self._buffer = ""
        self._offset = 0

    def poll(self) -> None:
        """Takes in the complete lines written since the last read."""
        try:
            with self.path.open() as fh:
                fh.seek(self._offset)
                chunk = fh.read()
                self._offset = fh.tell()
        except OSError:
            return
        now = time.monotonic() - self.start
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            try:
                self.events.append((now, json.loads(line)))
            except ValueError:
                continue


def _spans(events: list[Event]) -> list[tuple[str, str, float, float]]:
    """(kind, name, start, end) of every Kubernetes object step."""
    starts: dict[str, float] = {}
    spans: list[tuple[str, str, float, float]] = []
    for at, event in events:
        if "resourcePreEvent" in event:
            meta = event["resourcePreEvent"].get("metadata") or {}
            if meta.get("urn"):
                starts[meta["urn"]] = at
        elif "resOutputsEvent" in event:
            meta = event["resOutputsEvent"].get("metadata") or {}
            urn, typ = meta.get("urn", ""), meta.get("type", "")
            if urn in starts and typ.startswith("kubernetes:") and \
                    not typ.startswith("pulumi:providers"):
                spans.append((typ.rpartition(":")[2], urn.rsplit("::", 1)[-1],
                              starts.pop(urn), at))
    return spans


def analyse_events(events: list[Event]) -> EventAnalysis | None:
    """Where a pulumi command spent its time, per object the seconds from its step's
    start to its outputs, relative to the command's start; None without object steps."""
    spans = _spans(events)
    if not spans:
        return None
    end_all = max(at for at, _ in events)
    first = min(s for *_, s, _ in spans)
    last = max(e for *_, e in spans)
    # Cluster-scoped objects are named "<spoke>:<name>", namespaced "<spoke>:<ns>/<name>".
    cluster = [sp for sp in spans if "/" not in sp[1]]
    namespaced = [sp for sp in spans if "/" in sp[1] and not sp[1].endswith("-root-owner")]
    by_kind: dict[str, list[float]] = defaultdict(list)
    for kind, _, start, end in spans:
        by_kind[kind].append(end - start)
    ticks = sorted([(s, 1) for *_, s, _ in spans] + [(e, -1) for *_, e in spans],
                   key=lambda t: (t[0], t[1]))
    in_flight = peak = 0
    for _, delta in ticks:
        in_flight += delta
        peak = max(peak, in_flight)
    services = by_kind.get("Service", [])
    crds = [(s, e) for kind, _, s, e in spans if kind == "CustomResourceDefinition"]
    crd_start = min((s for s, _ in crds), default=None)
    crd_done = max((e for _, e in crds), default=None)
    crd_window = (crd_done - crd_start) if crd_start is not None and crd_done is not None \
        else None
    return EventAnalysis(
        total_s=end_all,
        before_first_object_s=first,
        objects_s=last - first,
        after_last_object_s=end_all - last,
        objects=len(spans),
        cluster_scoped_done_s=max((e for *_, e in cluster), default=None),
        namespaced_first_start_s=min((s for *_, s, _ in namespaced), default=None),
        max_in_flight=peak,
        mean_in_flight=sum(e - s for *_, s, e in spans) / max(last - first, 1e-9),
        crd_first_start_s=crd_start,
        crd_last_done_s=crd_done,
        crd_mean_in_flight=(sum(e - s for s, e in crds) / max(crd_window, 1e-9)
                            if crd_window is not None else None),
        services=len(services),
        service_mean_s=statistics.mean(services) if services else None,
        by_kind=sorted(((k, len(v), sum(v), max(v)) for k, v in by_kind.items()),
                       key=lambda row: -row[2])[:10],
        slowest=sorted(((f"{k} {n}", e - s) for k, n, s, e in spans),
                       key=lambda r: -r[1])[:6],
    )
