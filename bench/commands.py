"""Every command the benchmark runs goes through one runner: timed, its process tree's
memory sampled and its event log followed when asked, failures reported with secrets
blanked, and each command recorded (paths shortened) for the report's command list."""

from __future__ import annotations

import re
import resource
import shlex
import signal
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from access.redact import redact
from bench.events import Event, EventTail
from bench.metrics import RssPeak
from bench.sampling import MachineCpu, TreeSampler
from lab.paths import REPO

# Environment variables whose values are credentials: blanked in any failure shown.
SECRET_ENV_WORDS = ("PASSPHRASE", "PASSWORD", "TOKEN", "SECRET")


class BenchError(RuntimeError):
    """A step of the benchmark failed; the message is already redacted."""


def known_secrets(env: dict[str, str]) -> tuple[str, ...]:
    """The credential values a command was given (the stack's passphrase, tokens)."""
    return tuple(value for name, value in env.items()
                 if value and any(word in name.upper() for word in SECRET_ENV_WORDS))


@dataclass
class Timed:
    """One command: exit code, output and wall time (and peak RSS when sampled)."""

    args: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float
    rss: RssPeak = field(default_factory=RssPeak)
    events: list[Event] = field(default_factory=list)
    cpu_busy_pct: float = 0.0
    secrets: tuple[str, ...] = ()
    cpu_s: dict[str, float] = field(default_factory=dict)  # by process kind, when sampled
    reaped_cpu_s: float = 0.0  # the kernel's count: the command and what it reaped

    @property
    def ok(self) -> bool:
        return self.code == 0

    def fail(self, what: str) -> BenchError:
        """The error to raise: the last 40 lines of output, with secrets blanked."""
        tail = "\n".join((self.stdout + "\n" + self.stderr).strip().splitlines()[-40:])
        message = f"{what} failed (exit {self.code}): {shlex.join(self.args[:3])} ...\n{tail}"
        return BenchError(redact(message, self.secrets))


def stop(proc: subprocess.Popen, grace: float = 120) -> None:
    """Ends a command the benchmark gave up on as Ctrl-C would: Pulumi stops its update,
    saves its state and ends its plugins; killed only if it has not ended in `grace`
    seconds (a killed `pulumi` leaves its plugins running)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def _children_cpu() -> float:
    """User + system seconds of every child this process has reaped, and of what they
    reaped in turn (getrusage RUSAGE_CHILDREN): commands run one at a time, so the
    difference around one is that command's."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Runner:
    """Runs commands in the repo for one section, against its lab in `lab_root`;
    `commands` keeps every command template run, in first-run order."""

    lab_root: Path
    toolchain: Path | None = None  # the lab's bin directory, once the lab is up
    commands: dict[str, None] = field(default_factory=dict)

    def template(self, args: list[str]) -> str:
        """The command as recorded in docs/performance.md: paths replaced by short names."""
        text = shlex.join(args)
        replacements = [(str(self.lab_root), self.lab_root.name), (str(REPO), "<repo>")]
        if self.toolchain is not None:
            replacements.insert(0, (str(self.toolchain), "<toolchain>"))
        for old, new in replacements:
            text = text.replace(old, new)
        text = re.sub(r"t-bench-[0-9a-f]+-", "t-bench-<id>-", text)
        text = re.sub(rf"({re.escape(self.lab_root.name)}/work/)[\w.-]+", r"\1<file>", text)
        return text if len(text) <= 200 else text[:200] + " ..."

    def run(self, args: list[str], env: dict[str, str], *, sample_rss: bool = False,
            event_log: Path | None = None, timeout: float = 3600,
            record: bool = True) -> Timed:
        """Runs a command to completion and times it; never raises for a non-zero exit.
        `sample_rss` samples its process tree's memory and CPU; `event_log` follows that
        file."""
        if record:
            self.commands.setdefault(self.template(args))
        start = time.monotonic()
        cpu = MachineCpu()
        reaped = _children_cpu()
        proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        sampler = TreeSampler(proc.pid) if sample_rss else None
        tail = EventTail(event_log, start) if event_log else None
        with ExitStack() as watching:
            for watcher in (sampler, tail):
                if watcher is not None:
                    watching.enter_context(watcher)
            try:
                out, err = proc.communicate(timeout=timeout)
            except BaseException:
                stop(proc)
                raise
            finally:
                seconds = time.monotonic() - start
        return Timed(args, proc.returncode, out, err, seconds,
                     sampler.result() if sampler else RssPeak(),
                     tail.events if tail else [], cpu.busy_pct(), known_secrets(env),
                     sampler.cpu_seconds() if sampler else {}, _children_cpu() - reaped)
