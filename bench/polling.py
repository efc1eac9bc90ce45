"""A background look, repeated while something runs: the shape the memory samplers and the
event-log tail share."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self


class Poller:
    """Calls `poll()` at once, in the caller's thread (a command started just before the
    `with` is looked at without waiting for another thread to be scheduled), then every
    `interval` seconds from a thread until the `with` block ends, and one last time
    after it (what happened since the last look). Subclasses implement `poll`."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def poll(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.poll()
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()
