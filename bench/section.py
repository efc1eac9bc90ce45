"""A section of the benchmark, and the one way every section runs: its own lab made anew
and always torn down (bench/own_lab.py), its measurements, then its table on the
terminal, its results file and its part of docs/performance.md (bench/report.py)."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

from bench import report
from bench.log import log
from bench.machine import load_average, machine_facts
from bench.metrics import Samples
from bench.own_lab import BenchLab, BenchStack
from core.settings import Binaries
from lab.paths import REPO


@dataclass(frozen=True)
class Options:
    """The command line's choices (`python -m bench --help`); each section reads its own,
    None meaning the section's default."""

    runs: int | None = None
    pairs: int | None = None
    quick: bool = False
    parallel: int = 0
    qps: float = 0
    burst: int = 0
    no_variants: bool = False
    no_16: bool = False
    report_only: bool = False
    binaries: tuple[Binaries, ...] | None = None
    shard_spokes: int | None = None


@dataclass
class Run:
    """One section's run: the options, its lab, and what it measured: samples, and facts
    (the machine's, and figures that are not samples)."""

    options: Options
    bench: BenchLab
    samples: Samples = field(default_factory=Samples)
    facts: dict[str, Any] = field(default_factory=dict)

    def up(self, spokes: int, stack: str, extra_args: tuple[str, ...] = (),
           extra_env: dict[str, str] | None = None,
           binaries: Binaries | None = None) -> BenchStack:
        """The lab made anew with `spokes` spokes and a first stack on it, on the set of
        Pulumi binaries `binaries`; the machine's facts read with that stack's tools."""
        lab = self.bench.up(spokes)
        first = self.bench.stack(stack, extra_args, extra_env, binaries)
        self.facts.update(machine_facts(lab.bin, first.env))
        return first


def unchanged(results: dict[str, Any]) -> dict[str, Any]:
    """The `stored` of a section whose part reads its results alone: as they are."""
    return results


class Measures(Protocol):
    """What a section's package provides (bench/fleet, bench/cost, ...)."""

    def measure(self, run: Run) -> None:
        """Brings `run.bench` up and fills `run.samples` and `run.facts`."""

    def results(self, run: Run) -> dict[str, Any]:
        """The figures of its results file, from the samples, besides the facts."""

    def markdown(self, results: dict[str, Any], run: Run) -> str:
        """Its part of docs/performance.md."""

    def terminal(self, results: dict[str, Any]) -> str:
        """What the terminal shows at the end."""


@dataclass(frozen=True)
class Section:
    """A section: its package, its lab directory and results file under the repository,
    and the name of its marked section of docs/performance.md."""

    name: str
    package: str
    lab_dir: str
    results_file: str
    marker: str

    @property
    def module(self) -> Measures:
        """Imported when used: a child process that times the program under mocks
        imports no other section's code."""
        return cast(Measures, importlib.import_module(self.package))

    @property
    def what(self) -> str:
        """The first line of its package's docstring."""
        return (self.module.__doc__ or "").strip().splitlines()[0]

    @property
    def rewrites(self) -> bool:
        """Whether its part can be written again from its results file alone."""
        return hasattr(self.module, "stored")

    def run(self, options: Options, command: str,
            page: Path = report.PERFORMANCE_MD) -> int:
        """Measures and writes; with `report_only`, writes its part again from its
        stored results. 1 when the measurements failed."""
        section = self.module
        run = Run(options, BenchLab(REPO / self.lab_dir))
        results_json = REPO / "bench" / self.results_file
        if options.report_only:
            stored = json.loads(results_json.read_text())
            results = section.stored(stored)  # type: ignore[attr-defined]
        else:
            head = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                    "command": command, "machine_load_start": load_average()}
            log(f"section {self.name}: its lab in {run.bench.root}")
            if not run.bench.around(lambda: section.measure(run)):
                return 1
            results = {**head, **run.facts, "machine_load_end": load_average(),
                       **section.results(run)}
        print(section.terminal(results))
        report.write(results, section.markdown(results, run), self.marker, results_json,
                     page)
        log(f"section {self.name}: wrote {results_json} and {page}")
        return 0
