"""One lock for every change of a lab's set of clusters in a test run, across xdist
workers: kwokctl gives a new cluster the first free ports below 32768, so a cluster
created in one worker's lab could take the ports of a cluster another worker has stopped
for a moment. Creating, deleting, stopping and restarting clusters under this lock never
overlap."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def topology_lock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Held while the caller changes clusters; one file for all workers of the run."""
    path = tmp_path_factory.getbasetemp().parent / "lab-topology.lock"
    with path.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
