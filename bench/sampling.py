"""Memory and CPU of processes while a command runs, read through psutil: the peak
resident memory and the CPU seconds of a command's process tree per kind of process,
the share of the machine's CPU that was busy, the machine's memory in use, and the CPU
seconds given processes (the lab's control planes) spent. Pulumi and the lab share this
machine's cores, so all of them explain a time."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable

import psutil

from bench.metrics import RssPeak
from bench.polling import Poller

TOTAL = "total"


def process_kind(proc: psutil.Process) -> str:
    """engine / language_host / program / provider (the Go providers and the program's
    dynamic provider) / runner (the fleet runner and its per-stack worker processes),
    else the executable's name."""
    try:
        cmdline = proc.cmdline()
    except psutil.Error:
        return "other"
    base = os.path.basename(cmdline[0]) if cmdline else ""
    if base in ("sh", "bash") and len(cmdline) > 1 and not cmdline[1].startswith("-"):
        base = os.path.basename(cmdline[1])  # a plugin started through its shell script
    if base == "pulumi":
        return "engine"
    if base.startswith("pulumi-language-"):
        return "language_host"
    if base.startswith("python"):
        if "pulumi.dynamic" in cmdline[1:4]:
            return "provider"  # the program's dynamic provider, a Python process
        runner = "runner" in cmdline[1:3] or any("multiprocessing" in a for a in cmdline)
        return "runner" if runner else "program"
    if base.startswith("pulumi-resource-"):
        return "provider"
    return base or "other"


class TreeSampler(Poller):
    """Peak resident memory and CPU seconds of a process tree: every `interval` seconds,
    the RSS and CPU time of each process under `root`, per process kind. RSS: the peak
    of each kind and of the whole tree ("total"), kept separately. CPU: each process's
    user + system seconds as last seen, summed per kind; a process that ends between two
    looks loses at most `interval` seconds of its CPU. Use as a context manager around
    the run."""

    def __init__(self, root: int, interval: float = 0.2) -> None:
        super().__init__(interval)
        self.root = root
        self.peak: dict[str, int] = {}
        self.peak_count: dict[str, int] = {}
        self.cpu_by_pid: dict[int, tuple[str, float]] = {}

    def result(self) -> RssPeak:
        return RssPeak(dict(self.peak), dict(self.peak_count))

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds per process kind, and of the whole tree ("total")."""
        out: Counter[str] = Counter()
        for kind, seconds in self.cpu_by_pid.values():
            out[kind] += seconds
        return {**out, TOTAL: sum(out.values())}

    def _tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.root)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def poll(self) -> None:
        """One look at the tree: processes that are gone or have no resident set (a
        zombie) count for nothing."""
        per_kind: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for proc in self._tree():
            try:
                times = proc.cpu_times()
                # Looked at anew each time (a process just forked has its parent's name),
                # but a zombie has no name left: it keeps the kind it was seen with.
                kind = process_kind(proc)
                if kind == "other":
                    kind = self.cpu_by_pid.get(proc.pid, (kind, 0.0))[0]
                self.cpu_by_pid[proc.pid] = (kind, times.user + times.system)
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                rss = proc.memory_info().rss
            except psutil.Error:
                continue
            per_kind[kind] += rss
            count[kind] += 1
        per_kind[TOTAL] = sum(per_kind.values())
        for kind, value in per_kind.items():
            self.peak[kind] = max(self.peak.get(kind, 0), value)
        for kind, value in count.items():
            self.peak_count[kind] = max(self.peak_count.get(kind, 0), value)


class MachineCpu:
    """The share of the whole machine's CPU time that was busy between creation and
    `busy_pct()`: all processes, ours and other jobs'."""

    def __init__(self) -> None:
        self.start = self._read()

    @staticmethod
    def _read() -> tuple[float, float]:
        """(all CPU seconds, idle + iowait seconds) since boot, summed over the cores."""
        times = psutil.cpu_times()
        return sum(times), times.idle + getattr(times, "iowait", 0.0)

    def busy_pct(self) -> float:
        total, idle = self._read()
        d_total, d_idle = total - self.start[0], idle - self.start[1]
        return 100.0 * (d_total - d_idle) / d_total if d_total > 0 else 0.0


class ProcessCpu:
    """CPU seconds (user + system) the given processes spend between creation and
    `seconds()`; a process that is gone by then counts for nothing."""

    def __init__(self, pids: Iterable[int]) -> None:
        self.procs: list[psutil.Process] = []
        for pid in pids:
            try:
                self.procs.append(psutil.Process(pid))
            except psutil.Error:
                continue
        self.start = self._total()

    def _total(self) -> float:
        total = 0.0
        for proc in self.procs:
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    def seconds(self) -> float:
        return self._total() - self.start


class MachineMemory(Poller):
    """The most memory the whole machine had in use (psutil's `used`: every process,
    the lab's clusters too) while the `with` block ran."""

    def __init__(self, interval: float = 0.5) -> None:
        super().__init__(interval)
        self.peak_used = 0

    def poll(self) -> None:
        self.peak_used = max(self.peak_used, psutil.virtual_memory().used)
