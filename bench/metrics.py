"""The benchmark's figures as typed records: per-run samples, and what run 1's commands
are analysed into (memory peaks, event-log timings, state sizes, the program's own
time), so the summaries and the reports read fields, not guessed dict keys."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.log import log


@dataclass(frozen=True)
class Target:
    """A figure's limit: PASS when the figure is at most `limit` (at least, with
    `at_least`)."""

    key: str
    label: str
    limit: float
    at_least: bool = False

    def verdict(self, value: float | None) -> str | None:
        """PASS or MISS; None when the figure was not measured."""
        if value is None:
            return None
        ok = value >= self.limit if self.at_least else value <= self.limit
        return "PASS" if ok else "MISS"


@dataclass(frozen=True)
class RssPeak:
    """Peak resident memory of one command's process tree, by process kind ("engine",
    "language_host", "program", "provider", else the executable's name, and "total"
    for the whole tree), and the most processes of each kind seen at once."""

    bytes_by_kind: dict[str, int] = field(default_factory=dict)
    processes_by_kind: dict[str, int] = field(default_factory=dict)

    def get(self, kind: str) -> int:
        return self.bytes_by_kind.get(kind, 0)

    def __bool__(self) -> bool:
        return bool(self.bytes_by_kind)


@dataclass(frozen=True)
class EventAnalysis:
    """Where one pulumi command spent its time, from its followed event log. Times are
    seconds from the command's start; an object's time runs from its step's start to
    its outputs."""

    total_s: float
    before_first_object_s: float
    objects_s: float
    after_last_object_s: float
    objects: int
    cluster_scoped_done_s: float | None
    namespaced_first_start_s: float | None
    max_in_flight: int
    mean_in_flight: float
    # The CRDs' window (first CRD step started to last CRD done) and how many CRD steps
    # ran at once in it on average: the provider drops its cached OpenAPI schema after
    # every CRD it creates and fetches it again, under one lock, for the next step.
    crd_first_start_s: float | None
    crd_last_done_s: float | None
    crd_mean_in_flight: float | None
    services: int
    service_mean_s: float | None
    by_kind: list[tuple[str, int, float, float]]  # (kind, steps, sum of seconds, slowest)
    slowest: list[tuple[str, float]]  # ("Kind name", seconds)


@dataclass(frozen=True)
class StateBreakdown:
    """What the bytes of a `pulumi stack export` are."""

    objects: int
    inputs_bytes: int
    outputs_bytes: int
    managed_fields_bytes: int
    by_kind: list[tuple[str, int, int]]  # (kind, objects, bytes), largest first
    largest: list[tuple[str, int]]  # (object name, bytes), largest first


@dataclass(frozen=True)
class ProgramFigures:
    """The program's own run for `spokes` spokes under mocks, in a fresh process."""

    spokes: int
    ms: float
    plan_ms: float
    resources: int
    load_documents_calls: int
    load_documents_parses: int
    peak_rss_bytes: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProgramFigures:
        return cls(**data)


@dataclass
class Notes:
    """Run 1's analyses, for the report's sections (later runs only add samples)."""

    # By command ("install", "growth_destroy_4", ...); None: its log had no object step.
    events: dict[str, EventAnalysis | None] = field(default_factory=dict)
    state: dict[int, StateBreakdown] = field(default_factory=dict)  # by number of spokes
    noop_diff_kubectl_objects: list[str] | None = None


@dataclass
class Samples:
    """Per-run samples of every figure, keyed like results.json."""

    values: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    flags: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, list[RssPeak]] = field(default_factory=lambda: defaultdict(list))
    notes: Notes = field(default_factory=Notes)

    def add(self, key: str, value: float) -> None:
        self.values[key].append(value)
        log(f"  {key} = {value:.3f}")

    def median(self, key: str) -> float | None:
        got = self.values.get(key)
        return statistics.median(got) if got else None

    def medians(self) -> dict[str, Any]:
        """The median of every sampled figure, by key."""
        return {key: self.median(key) for key in sorted(self.values)}

    def take(self, other: Samples, prefix: str, notes: bool) -> None:
        """Adds `other`'s samples, flags and memory peaks under their keys prefixed with
        `prefix`, and with `notes` its analyses where this one has none: one set of
        measurements kept apart while it runs, beside the others in one results file."""
        for key, values in other.values.items():
            self.values[prefix + key].extend(values)
        for key, flags in other.flags.items():
            self.flags[prefix + key].extend(flags)
        for key, peaks in other.rss.items():
            self.rss[prefix + key].extend(peaks)
        if notes:
            for command, analysis in other.notes.events.items():
                self.notes.events.setdefault(command, analysis)
            for spokes, breakdown in other.notes.state.items():
                self.notes.state.setdefault(spokes, breakdown)


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def rounded(figures: dict[str, Any]) -> dict[str, Any]:
    """Figures as a results file keeps them: floats to three decimals."""
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in figures.items()}
