"""The program's own memory figure: this process's peak while it runs, not its parent's."""

from __future__ import annotations

import subprocess
import sys

import psutil


def test_the_peak_is_this_process_own_not_its_parent() -> None:
    ballast = bytearray(200 * 1024 * 1024)  # the parent grows well past a small child
    ballast[::4096] = b"x" * len(ballast[::4096])
    child = subprocess.run(
        [sys.executable, "-c", "from bench.program import PeakRss\n"
                               "with PeakRss() as peak: pass\n"
                               "print(peak.bytes)"],
        capture_output=True, text=True, check=True)
    # ru_maxrss would report the parent's peak in the child; the figure does not.
    assert 0 < int(child.stdout) < psutil.Process().memory_info().rss - 150 * 1024 * 1024
    del ballast


SAMPLED = """
import psutil
from bench.program import PeakRss
from lab.wait import wait_for
me = psutil.Process()
with PeakRss(interval=0.01) as peak:
    before = me.memory_info().rss
    block = bytearray(64 * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])
    wait_for(lambda: peak.bytes >= before + 60 * 1024 * 1024, timeout=30, interval=0.01,
             what="the block's memory sampled")
    del block  # returned to the system before the block ends
print(peak.bytes, me.memory_info().rss)
"""


def test_the_peak_is_sampled_while_the_block_runs_and_kept() -> None:
    # In a fresh interpreter: one that freed a large block before may hand the same,
    # already resident, pages out again, and the new block would not move its memory.
    child = subprocess.run([sys.executable, "-c", SAMPLED], capture_output=True, text=True,
                           check=True, timeout=120)
    peak, after = (int(v) for v in child.stdout.split())
    assert peak > after + 30 * 1024 * 1024
