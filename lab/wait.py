"""One way to wait for a cluster to reach a state: poll a condition until it holds or a
deadline passes. The lab, the tests and the benchmark all wait this way, so no wait is
a fixed sleep and every timeout says what it was waiting for."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    """The condition did not hold before the deadline."""


def wait_for(predicate: Callable[[], T], timeout: float, interval: float = 0.5,
             what: str = "condition") -> T:
    """Calls `predicate` every `interval` seconds until it returns something truthy, and
    returns that (a token, a list, True). Raises WaitTimeout naming `what` once `timeout`
    seconds have passed; the predicate always gets one last look after the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{what}: not met in {timeout:g}s")
        time.sleep(min(interval, max(deadline - time.monotonic(), 0.0)))
