"""The program benchmark's own memory figure: this process's peak, not its parent's."""

from __future__ import annotations

import subprocess
import sys

from bench.program import own_peak_rss_bytes


def test_the_peak_is_this_process_own_and_starts_anew_at_exec() -> None:
    ballast = bytearray(200 * 1024 * 1024)  # the parent grows well past a small child
    ballast[::4096] = b"x" * len(ballast[::4096])
    child = subprocess.run(
        [sys.executable, "-c", "from bench.program import own_peak_rss_bytes; "
                               "print(own_peak_rss_bytes())"],
        capture_output=True, text=True, check=True)
    # ru_maxrss would report the parent's peak in the child; the figure does not.
    assert 0 < int(child.stdout) < own_peak_rss_bytes() - 150 * 1024 * 1024
    del ballast
