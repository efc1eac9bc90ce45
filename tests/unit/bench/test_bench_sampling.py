"""Memory and CPU sampling through psutil, against processes the test starts itself."""

from __future__ import annotations

import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
import pytest

from bench import commands
from bench.commands import Runner
from bench.sampling import MachineCpu, ProcessCpu, TreeSampler, process_kind
from lab.paths import REPO
from lab.wait import wait_for

# Holds 64 MB, starts a child that holds 32 MB, says so, then waits for stdin to close.
PARENT = """
import subprocess, sys
block = bytearray(64 * 2**20)
child = subprocess.Popen([sys.executable, "-c",
    "import sys; b = bytearray(32 * 2**20); print('ready', flush=True); sys.stdin.read()"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
child.stdout.readline()
print("ready", flush=True)
sys.stdin.read()
child.stdin.close()
child.wait()
"""
BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_rss_of_a_process_tree_by_kind() -> None:
    proc = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with TreeSampler(proc.pid, interval=0.01) as sampler:
            wait_for(lambda: sampler.peak_count.get("program", 0) >= 2, timeout=30,
                     interval=0.01, what="both processes sampled")
        peak = sampler.result()
    finally:
        proc.communicate("", timeout=30)
    assert peak.processes_by_kind["program"] == 2  # both are `python`
    assert peak.get("program") >= 96 * 2**20
    assert peak.get("total") == peak.get("program")
    assert peak


def test_a_gone_process_samples_as_nothing() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    sampler = TreeSampler(proc.pid)
    sampler.poll()
    assert sampler.result().get("total") == 0


def test_process_kinds() -> None:
    assert process_kind(psutil.Process()) == "program"


def test_cpu_seconds_of_given_processes() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()\n" + BURN],
                            stdin=subprocess.PIPE, text=True)
    cpu = ProcessCpu([proc.pid])
    machine = MachineCpu()
    proc.stdin.write("go")  # type: ignore[union-attr]
    proc.stdin.close()  # type: ignore[union-attr]
    # Zombie until reaped: its CPU times still read.
    wait_for(lambda: cpu.seconds() >= 0.3, timeout=30, interval=0.02, what="0.3 s of CPU")
    proc.wait()
    assert 0.0 <= machine.busy_pct() <= 100.0


def test_runner_times_samples_and_records(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The command runs until the runner's sampler has seen it (a command that ends before
    the sampler's first look has no memory to report, which a busy machine makes likely
    for a 30 ms one)."""
    samplers: list[TreeSampler] = []

    class Watched(TreeSampler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            samplers.append(self)

    monkeypatch.setattr(commands, "TreeSampler", Watched)
    marker = tmp_path / "sampled"
    script = tmp_path / "until_sampled.py"
    script.write_text("import os, time\nprint('hi', flush=True)\n"
                      f"while not os.path.exists({str(marker)!r}): time.sleep(0.01)\n")
    args = [sys.executable, str(script)]
    runner = Runner(tmp_path / ".lab-bench")
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(runner.run, args, {}, sample_rss=True)
        wait_for(lambda: samplers and samplers[0].peak.get("total", 0) > 0, timeout=60,
                 interval=0.01, what="the command's process tree sampled")
        marker.touch()
        res = running.result(timeout=60)
    assert res.ok and res.stdout == "hi\n" and res.seconds > 0
    assert res.rss.get("total") > 0
    assert res.rss.processes_by_kind == {"program": 1}
    assert list(runner.commands) == [shlex.join(args).replace(str(REPO), "<repo>")]


def test_a_failure_shows_no_secret(tmp_path: Path) -> None:
    runner = Runner(tmp_path / ".lab-bench")
    env = {"PULUMI_CONFIG_PASSPHRASE": "correct-horse-battery"}
    res = runner.run([sys.executable, "-c", "import os, sys; "
                      "print('passphrase', os.environ['PULUMI_CONFIG_PASSPHRASE']); "
                      "print('token: abc.def'); sys.exit(3)"], env, record=False)
    message = str(res.fail("the step"))
    assert "exit 3" in message
    assert "correct-horse-battery" not in message and "abc.def" not in message
    assert "<redacted>" in message


class _Named:
    """Stands in for a psutil.Process: process_kind reads only its command line."""

    def __init__(self, *cmdline: str) -> None:
        self._cmdline = list(cmdline)

    def cmdline(self) -> list[str]:
        return self._cmdline


def test_kinds_of_the_runner_and_the_providers() -> None:
    def kind(*cmdline: str) -> str:
        return process_kind(_Named(*cmdline))  # type: ignore[arg-type]

    assert kind("/venv/bin/python", "-m", "runner", "up") == "runner"
    assert kind("/venv/bin/python", "-c", "from multiprocessing.spawn import spawn_main",
                "--multiprocessing-fork") == "runner"
    assert kind("/venv/bin/python", "-u", "-m", "pulumi.dynamic", "127.0.0.1:1") == "provider"
    assert kind("/bin/sh", "/bin/pulumi-resource-pulumi-python", "127.0.0.1:1") == "provider"
    assert kind("/plugins/pulumi-resource-kubernetes", "127.0.0.1:1") == "provider"
    assert kind("/venv/bin/python3", "/bin/pulumi-language-python-exec") == "program"
    assert kind("/bin/pulumi", "up") == "engine"
    assert kind() == "other"  # a zombie has no command line


def test_cpu_of_a_tree_by_kind_outlives_its_processes() -> None:
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    with TreeSampler(proc.pid, interval=0.01) as sampler:
        proc.wait()
    cpu = sampler.cpu_seconds()
    # The process is gone by the last look; what it was seen to spend stays, as a program.
    assert cpu["program"] >= 0.25
    assert cpu["total"] == cpu["program"]
