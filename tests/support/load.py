"""A busy machine, made on purpose: CPU burners and the lab's own controller-managers
at the lowest CPU priority. Only processes this module starts, or that the lab
started (by pid from kwokctl's pid files), are touched, and every change is undone."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from lab.clusters import Kwok

BURN = "while True: pass"


@contextmanager
def cpu_burners(count: int) -> Iterator[list[int]]:
    """`count` processes that each keep one core busy; ended by pid afterwards."""
    procs = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]
    try:
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(30)


def _threads(pid: int) -> list[int]:
    """Every thread of `pid`: Linux keeps a niceness per thread, and a Go program's
    threads exist long before anyone renices it."""
    return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]


@contextmanager
def lowest_priority(pids: list[int]) -> Iterator[None]:
    """Nice 19 for every thread of each pid while the block runs, then each thread's
    own niceness again."""
    before: dict[int, int] = {}
    try:
        for pid in pids:
            for tid in _threads(pid):
                before[tid] = os.getpriority(os.PRIO_PROCESS, tid)
                os.setpriority(os.PRIO_PROCESS, tid, 19)
        yield
    finally:
        for tid, nice in before.items():
            try:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
            except ProcessLookupError:
                pass


@contextmanager
def loaded_machine(kwok: Kwok, spokes: list[str], burners_per_core: int = 3) -> Iterator[None]:
    """Three busy processes per core, and every listed spoke's kube-controller-manager
    (the aggregation and garbage-collection controllers) at nice 19."""
    managers = [kwok.pids(name)["kube-controller-manager"] for name in spokes]
    with ExitStack() as stack:
        stack.enter_context(cpu_burners(burners_per_core * (os.cpu_count() or 1)))
        stack.enter_context(lowest_priority(managers))
        yield
