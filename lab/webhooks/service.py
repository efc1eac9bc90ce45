"""Starting and stopping a lab's webhook host, a background process of its own whose pid
the lab keeps (DIR/webhooks/host.pid): `lab up` starts it when it is not running, `lab
down` ends it, and with it every webhook process it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lab.paths import REPO, LabDir

STOP_WAIT_S = 15.0


def _pid_file(where: LabDir) -> Path:
    return where.webhooks / "host.pid"


def running_pid(where: LabDir) -> int | None:
    """The host's pid when the process of the pid file is alive and is this lab's host."""
    try:
        pid = int(_pid_file(where).read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if b"lab.webhooks.host" in cmdline and str(where.root).encode() in cmdline else None


def start(where: LabDir, commands: Path) -> int:
    """Starts the lab's host unless it runs; returns its pid."""
    pid = running_pid(where)
    if pid is not None:
        return pid
    where.webhooks.mkdir(parents=True, exist_ok=True)
    with (where.webhooks / "host.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lab.webhooks.host", str(where.root), str(commands)],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    _pid_file(where).write_text(f"{proc.pid}\n")
    print(f"lab: webhook host started (pid {proc.pid}); log {where.webhooks / 'host.log'}",
          file=sys.stderr)
    return proc.pid


def stop(where: LabDir) -> None:
    """Ends the lab's host (SIGTERM: it stops its webhook processes first), by its pid."""
    pid = running_pid(where)
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline and running_pid(where) == pid:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.1)
    if running_pid(where) == pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _pid_file(where).unlink(missing_ok=True)
