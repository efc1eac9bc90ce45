"""The one lab driver of the benchmark: a section's own lab, by directory (never the tests'
`.lab/`: two labs on one machine would collide), and the product's throwaway stacks on
it. `up` makes the lab anew, or again in the same directory with another number of
spokes; `around` runs a section's work and always takes the lab down after, its logs
kept on failure. Every command goes through the section's one Runner."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from bench.commands import BenchError, Runner, Timed
from bench.kubectl import Kubectl
from bench.log import log
from bench.sampling import MachineCpu, ProcessCpu
from core.settings import Binaries, settings
from lab.fleet import FleetStack, entry
from lab.handle import Lab, ensure_lab


def bench_entry(spoke: str, config: dict | None = None) -> dict:
    """Serving (Kourier) + Eventing 1.23, CRDs deleted on destroy so that every run
    starts on a fresh spoke and destroy removes what `kubectl delete` removes."""
    e = entry(spoke)
    for component in ("serving", "eventing"):
        e[component]["deleteCrdsOnDestroy"] = True
    if config:
        e["serving"]["config"] = config
    return e


def settle(busy_pct: float = 35.0, window_s: float = 5.0, timeout_s: float = 300.0) -> None:
    """Waits until a new lab has finished starting (the machine's CPU busy at most
    `busy_pct` over `window_s`), so the first measurement does not pay for it."""
    started = time.monotonic()
    while True:
        cpu = MachineCpu()
        time.sleep(window_s)  # the window the busy share is measured over
        busy = cpu.busy_pct()
        if busy <= busy_pct or time.monotonic() - started > timeout_s:
            log(f"lab: machine {busy:.0f}% busy after {time.monotonic() - started:.0f} s")
            return


class BenchStack(FleetStack):
    """A throwaway `t-bench-*` stack of the product (its config file is ignored by git) in
    the lab's own file backend, timed command by command."""

    def __init__(self, lab: Lab, name: str, runner: Runner, extra_args: list[str],
                 extra_env: dict[str, str], binaries: Binaries | None = None) -> None:
        """`binaries`: the set of Pulumi binaries it runs on (KNATIVE_FLEET_BINARIES unless
        given), kept so that every figure can say which set it was taken on."""
        self.binaries: Binaries = binaries or settings().binaries
        super().__init__(lab, name, lab.dir.state, binaries=self.binaries)
        # `--event-log` exists only with the CLI's debug commands on.
        self.env.update({"PULUMI_DEBUG_COMMANDS": "true", **extra_env})
        self.runner = runner
        self.extra_args = extra_args
        self.work = lab.dir.root / "work"
        self.state_dir = lab.dir.state
        # How long one pulumi command may run before it is stopped (as Ctrl-C would).
        self.timeout_s = 3600.0

    def pulumi(self, *args: str, sample_rss: bool = False,
               event_log: str | None = None) -> Timed:
        """`pulumi ARGS` on this stack; `event_log` names a file in the work directory
        that the engine's event log goes to, followed while it runs."""
        extra = list(self.extra_args)
        path = self.work / event_log if event_log else None
        if path:
            extra += ["--event-log", str(path)]
        return self.runner.run(
            ["pulumi", *args, *extra, "--stack", self.stack, "--non-interactive"], self.env,
            sample_rss=sample_rss, event_log=path, timeout=self.timeout_s)

    def must(self, what: str, *args: str, sample_rss: bool = False,
             event_log: str | None = None) -> Timed:
        res = self.pulumi(*args, sample_rss=sample_rss, event_log=event_log)
        if not res.ok:
            raise res.fail(what)
        return res

    def install(self, event_log: str | None = None) -> Timed:
        return self.must("pulumi up", "up", "--yes", "--skip-preview", sample_rss=True,
                         event_log=event_log)

    def noop_preview(self, event_log: str | None = None,
                     sample_rss: bool = False) -> tuple[Timed, bool]:
        """`pulumi preview --diff --expect-no-changes`; (timing, whether it was a no-op)."""
        res = self.pulumi("preview", "--diff", "--expect-no-changes", event_log=event_log,
                          sample_rss=sample_rss)
        if res.ok:
            return res, True
        if "no changes were expected" in res.stdout + res.stderr:
            return res, False
        raise res.fail("pulumi preview")

    def destroy(self, event_log: str | None = None) -> Timed:  # type: ignore[override]
        return self.must("pulumi destroy", "destroy", "--yes", "--skip-preview",
                         event_log=event_log)

    def export(self) -> tuple[int, dict]:  # type: ignore[override]
        """(bytes of `pulumi stack export`, the export)."""
        res = self.runner.run(
            ["pulumi", "stack", "export", "--stack", self.stack, "--non-interactive"],
            self.env)
        if not res.ok:
            raise res.fail("pulumi stack export")
        return len(res.stdout.encode()), json.loads(res.stdout)

    def checkpoint_bytes(self) -> int | None:
        """Size of the stack's checkpoint file in the file backend, as stored."""
        found = sorted((self.state_dir / ".pulumi" / "stacks").rglob(f"{self.stack}.json*"))
        found = [f for f in found if not f.name.endswith(".bak")]
        return found[0].stat().st_size if found else None

    def spokes_ready(self, names: Sequence[str]) -> None:
        res = self.runner.run(["pulumi", "stack", "output", "--json", "spokes", "--stack",
                               self.stack, "--non-interactive"], self.env, record=False)
        if not res.ok:
            raise res.fail("pulumi stack output")
        out = json.loads(res.stdout)
        not_ready = [n for n in names if not (out.get(n) or {}).get("ready")]
        if not_ready:
            raise BenchError(f"spokes not ready after pulumi up: {', '.join(not_ready)}")

    def drop(self) -> None:
        """Forgets the stack and deletes its config file (best effort)."""
        try:
            self.runner.run(["pulumi", "stack", "rm", "--yes", "--force", "--stack",
                             self.stack, "--non-interactive"], self.env, record=False,
                            timeout=120)
        finally:
            self.cleanup()


class BenchLab:
    """A section's lab in `root` and every stack made on it, so that teardown removes
    exactly those."""

    def __init__(self, root: Path) -> None:
        self.runner = Runner(root)
        self.run_id = uuid.uuid4().hex[:6]
        self.stacks: list[BenchStack] = []
        self._lab: Lab | None = None

    @property
    def root(self) -> Path:
        return self.runner.lab_root

    @property
    def lab(self) -> Lab:
        """The lab brought up by `up`."""
        if self._lab is None:
            raise BenchError(f"no lab is up in {self.root}")
        return self._lab

    def command(self, *args: str, check: bool = True) -> None:
        """`python -m lab --dir ROOT ARGS`."""
        res = self.runner.run([sys.executable, "-m", "lab", "--dir", str(self.root), *args],
                              dict(os.environ))
        if check and not res.ok:
            raise res.fail(f"python -m lab {' '.join(args)}")

    def up(self, spokes: int) -> Lab:
        """The lab made anew with a hub and `spokes` spokes: the stacks of an earlier one
        dropped, what it left taken down and removed; returns once it has settled."""
        self.drop_stacks()
        log(f"lab: a hub and {spokes} spokes in {self.root}")
        self.command("down", check=False)
        for leftover in ("state", "work", "dump"):
            shutil.rmtree(self.root / leftover, ignore_errors=True)
        (self.root / "work").mkdir(parents=True)
        self.command("up", "--spokes", str(spokes))
        settle()
        self._lab = ensure_lab(self.root)
        self.runner.toolchain = self._lab.bin
        return self._lab

    def stack(self, suffix: str, extra_args: Sequence[str] = (),
              extra_env: dict[str, str] | None = None,
              binaries: Binaries | None = None) -> BenchStack:
        """A new stack of the product on the lab, `extra_args` added to each pulumi
        command and `extra_env` to its environment, on the set of Pulumi binaries
        `binaries` (KNATIVE_FLEET_BINARIES unless given)."""
        stack = BenchStack(self.lab, f"t-bench-{self.run_id}-{suffix}", self.runner,
                           list(extra_args), dict(extra_env or {}), binaries)
        self.stacks.append(stack)
        stack.init()
        return stack

    def drop_stacks(self) -> None:
        for stack in self.stacks:
            try:
                stack.drop()
            except Exception as exc:  # noqa: BLE001 - teardown goes on
                log(f"could not remove stack {stack.stack}: {type(exc).__name__}")
        self.stacks.clear()

    def control_plane_cpu(self, spokes: Iterable[str]) -> ProcessCpu:
        """CPU of the named spokes' control planes (kube-apiserver, etcd,
        controller-manager, scheduler, kwok): they share this machine's cores with Pulumi
        and kubectl."""
        kwok = self.lab.kwok()
        return ProcessCpu(pid for name in spokes for pid in kwok.pids(name).values())

    def kubectl(self, spoke: str) -> Kubectl:
        return Kubectl(self.lab, spoke, self.runner)

    def assert_fresh(self, spokes: Iterable[str]) -> None:
        """Each spoke has no install namespace and no Knative CRD left."""
        for name in spokes:
            self.kubectl(name).assert_fresh(name)

    def around(self, work: Callable[[], None]) -> bool:
        """Runs `work` (which brings the lab up); whatever happens its stacks are dropped
        and the lab taken down after, its logs and events kept in `dump/` on failure and
        the lab directory removed on success. True when `work` succeeded."""
        failed = True
        try:
            try:
                work()
            finally:
                self.drop_stacks()
            failed = False
        except BenchError as exc:
            log(f"FAILED: {exc}")
        finally:
            if failed:
                self.command("dump", "--out", str(self.root / "dump"), check=False)
                log(f"lab logs and events kept in {self.root / 'dump'}")
            log("lab: down")
            self.command("down", check=False)
            if not failed:
                shutil.rmtree(self.root, ignore_errors=True)
        return not failed
