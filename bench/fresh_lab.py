"""A benchmark's own lab: made anew (whatever an earlier run left is taken down and
removed, the lab comes up, and the first measurement waits until it has settled), and
always taken down after."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

from bench.commands import BenchError, Runner
from bench.log import log
from bench.sampling import MachineCpu


def fresh_lab(runner: Runner, spokes: int) -> None:
    log(f"lab: a hub and {spokes} spokes in {runner.lab_root}")
    runner.lab("down", check=False)
    for leftover in ("state", "work", "dump"):
        shutil.rmtree(runner.lab_root / leftover, ignore_errors=True)
    (runner.lab_root / "work").mkdir(parents=True)
    runner.lab("up", "--spokes", str(spokes))
    settle()


def settle(busy_pct: float = 35.0, window_s: float = 5.0, timeout_s: float = 300.0) -> None:
    """Waits until the new lab has finished starting (the machine's CPU busy at most
    `busy_pct` over `window_s`), so the first measurement does not pay for it."""
    started = time.monotonic()
    while True:
        cpu = MachineCpu()
        time.sleep(window_s)  # the window the busy share is measured over
        busy = cpu.busy_pct()
        if busy <= busy_pct or time.monotonic() - started > timeout_s:
            log(f"lab: machine {busy:.0f}% busy after {time.monotonic() - started:.0f} s")
            return


def on_own_lab(runner: Runner, work: Callable[[], None]) -> bool:
    """Runs `work` (which brings the lab up); whatever happens the lab is taken down
    after, its logs and events kept in `dump/` on failure and the lab directory removed
    on success. True when `work` succeeded."""
    failed = True
    try:
        work()
        failed = False
    except BenchError as exc:
        log(f"FAILED: {exc}")
    finally:
        if failed:
            runner.lab("dump", "--out", str(runner.lab_root / "dump"), check=False)
            log(f"lab logs and events kept in {runner.lab_root / 'dump'}")
        log("lab: down")
        runner.lab("down", check=False)
        if not failed:
            shutil.rmtree(runner.lab_root, ignore_errors=True)
    return not failed
