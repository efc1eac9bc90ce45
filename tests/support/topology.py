"""One lock for every change of a lab's set of clusters in a test run, across xdist
workers: kwokctl gives a new cluster the first free ports below 32768, so a cluster
created in one worker's lab could take the ports of a cluster another worker has stopped
for a moment. Creating, deleting, stopping and restarting clusters under this lock never
overlap."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from kubernetes import client

from lab.handle import Lab
from lab.paths import REPO
from lab.register import GROUP, PLURAL, PROFILE_NAMESPACE, VERSION


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


def lab_with(spokes: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The worker's lab grown or shrunk to `spokes` spokes, under the lock."""
    with topology_lock(tmp_path_factory):
        subprocess.run([sys.executable, "-m", "lab", "up", "--spokes", str(spokes)],
                       cwd=REPO, check=True)


def relabel(lab: Lab, name: str, labels: dict[str, str | None]) -> None:
    """Sets (or, with None, removes) labels of the lab's ClusterProfile `name`."""
    client.CustomObjectsApi(lab.hub.api()).patch_namespaced_custom_object(
        GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name, {"metadata": {"labels": labels}})
