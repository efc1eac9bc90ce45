"""Fleet benchmark: knative-fleet against plain kubectl on a lab of its own.

`python -m bench.fleet [--runs 3] [--quick]` brings up a hub and 4 spokes in
`.lab-bench/` (never the test lab in `.lab/`), measures install, no-op review, a
one-key change, destroy and growth, prints a table, writes `BENCHMARKS.md` and
`bench/results.json`, and tears its lab down, on failure too. Every figure is the
median of `--runs` runs; nothing in the two files is typed by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH_LAB = REPO / ".lab-bench"
# Before any lab module is imported: lab/paths.py reads it once, at import time.
os.environ["KNATIVE_FLEET_LAB_DIR"] = str(BENCH_LAB)

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from typing import Any  # noqa: E402

import yaml  # noqa: E402

from config.fleet import FleetEntry, parse_fleet_config  # noqa: E402
from knative import manifests, releases  # noqa: E402
from knative import plan as planning  # noqa: E402
from lab.clusters import Kwok  # noqa: E402
from lab.paths import LAB_DIR, RELEASES  # noqa: E402
from lab.toolchain import tool_env  # noqa: E402
from tests.support.fleet import FleetStack, entry  # noqa: E402
from tests.support.lab import Lab, ensure_lab  # noqa: E402

assert LAB_DIR == BENCH_LAB, "lab.paths was imported before KNATIVE_FLEET_LAB_DIR was set"

SPOKES = 4
FLEET_SPOKE = "spoke-1"  # knative-fleet installs here in measurements 1-4
KUBECTL_SPOKE = "spoke-2"  # the kubectl baseline installs here
GROWTH = (1, 2, 4)
PROGRAM_SIZES = (1, 10, 100)
FIELD_MANAGER = "knative-fleet"
# Measurement 3: one key of one ConfigMap, through the entry's `config`.
SMALL_CHANGE = {"autoscaler": {"max-scale-up-rate": "500.0"}}
SMALL_CHANGE_CM = ("knative-serving", "config-autoscaler", "max-scale-up-rate")
SKIP_CHECKPOINTS = "PULUMI_SKIP_CHECKPOINTS"  # on in every stack, as the README recommends
STATE_LIMIT = 2_000_000  # bytes per spoke ("2 MB")
RESULTS_JSON = REPO / "bench" / "results.json"
BENCHMARKS_MD = REPO / "BENCHMARKS.md"
PINS = REPO / "toolchain" / "pins.env"

# (key, label, unit, limit): PASS when the figure is at most the limit.
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("install_ratio", "install <= 2x kubectl apply + wait", 2.0),
    ("noop_preview_ratio", "no-op preview <= 2x kubectl diff", 2.0),
    ("destroy_ratio", "destroy <= 2x kubectl delete --wait", 2.0),
    ("growth_4_vs_1", "install, 4 spokes <= 2x 1 spoke", 2.0),
    ("growth_preview_4_vs_1", "no-op preview, 4 spokes <= 2x 1 spoke", 2.0),
    ("growth_destroy_4_vs_1", "destroy, 4 spokes <= 2x 1 spoke", 2.0),
    ("program_ms_per_spoke", "program <= 50 ms per extra spoke", 50.0),
    ("state_bytes_per_spoke", "state <= 2 MB per spoke", float(STATE_LIMIT)),
)

COMMANDS: dict[str, None] = {}  # every command template run, in first-run order
SECRET_PATTERNS = (
    re.compile(r"eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]+"),  # JWTs (ServiceAccount tokens)
    re.compile(r"(?i)(\"?(?:token|client-key-data|client-certificate-data|password)\"?"
               r"\s*[:=]\s*\"?)[^\s\",]+"),
    re.compile(r"(?i)(bearer\s+)\S+"),
)


def log(message: str) -> None:
    """Progress on stderr, with the wall-clock time."""
    print(f"bench {datetime.now().strftime('%H:%M:%S')}: {message}", file=sys.stderr, flush=True)


def redact(text: str) -> str:
    """The text with anything that looks like a token or key replaced."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "<redacted>", text)
    return text


class BenchError(RuntimeError):
    """A step of the benchmark failed; the message is already redacted."""


# --------------------------------------------------------------------------- processes


class RssSampler:
    """Peak resident memory of a process tree: every `interval` seconds, VmRSS of each
    process under `root`, summed per process kind; `peak` keeps each kind's maximum
    and the maximum of the whole tree under "total"."""

    def __init__(self, root: int, interval: float = 0.2) -> None:
        self.root = root
        self.interval = interval
        self.peak: dict[str, int] = {}
        self.peak_count: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def _tree(self) -> set[int]:
        children: dict[int, list[int]] = defaultdict(list)
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            fields = _stat_fields(int(name))
            if fields is not None:
                children[int(fields[1])].append(int(name))
        tree, todo = {self.root}, [self.root]
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in tree:
                    tree.add(child)
                    todo.append(child)
        return tree

    def sample(self) -> None:
        per_kind: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for pid in self._tree():
            rss = _vm_rss(pid)
            if rss is None:
                continue
            kind = _process_kind(pid)
            per_kind[kind] += rss
            count[kind] += 1
        per_kind["total"] = sum(per_kind.values())
        for kind, value in per_kind.items():
            self.peak[kind] = max(self.peak.get(kind, 0), value)
        for kind, value in count.items():
            self.peak_count[kind] = max(self.peak_count.get(kind, 0), value)


class CpuMeter:
    """The share of the whole machine's CPU time that was busy between start and
    `busy_pct()` (all processes, ours and other jobs'), from /proc/stat."""

    def __init__(self) -> None:
        self.start = self._read()

    @staticmethod
    def _read() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields), idle

    def busy_pct(self) -> float:
        total, idle = self._read()
        d_total, d_idle = total - self.start[0], idle - self.start[1]
        return 100.0 * (d_total - d_idle) / d_total if d_total else 0.0


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state is [0], ppid [1]), or None
    when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


class ControlPlaneCpu:
    """CPU seconds the lab's own control planes (kube-apiserver, etcd, controller-manager,
    scheduler, kwok) of the named spokes spend between start() and seconds(): they share
    this machine's cores with Pulumi and kubectl, so a bigger fleet slows both."""

    def __init__(self, lab: Lab, spokes: list[str]) -> None:
        kwok = Kwok(lab.bin, tool_env(lab.bin))
        self.pids = [pid for name in spokes for pid in kwok.pids(name).values()]
        self.start_ticks = self._ticks()

    def _ticks(self) -> int:
        total = 0
        for pid in self.pids:
            fields = _stat_fields(pid)
            if fields is not None:
                total += int(fields[11]) + int(fields[12])  # utime + stime
        return total

    def seconds(self) -> float:
        return (self._ticks() - self.start_ticks) / os.sysconf("SC_CLK_TCK")


def _vm_rss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None  # a kernel thread or a zombie: no resident set


def _process_kind(pid: int) -> str:
    """engine / language host / program / provider, else the executable's name."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except (OSError, UnicodeDecodeError):
        return "other"
    base = os.path.basename(argv0)
    if base == "pulumi":
        return "engine"
    if base.startswith("pulumi-language-"):
        return "language_host"
    if base.startswith("python"):
        return "program"
    if base.startswith("pulumi-resource-"):
        return "provider"
    return base or "other"


class EventTail:
    """Follows a `pulumi --event-log` file while the command runs (the CLI writes each
    event as it happens) and stamps every event with the seconds since `start`: the
    log's own timestamps have whole-second resolution only."""

    def __init__(self, path: Path, start: float, interval: float = 0.05) -> None:
        self.path = path
        self.start = start
        self.interval = interval
        self.events: list[tuple[float, dict]] = []
        self._buffer = ""
        self._offset = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start_thread(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._read()  # whatever arrived after the last poll

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._read()

    def _read(self) -> None:
        try:
            with self.path.open() as fh:
                fh.seek(self._offset)
                chunk = fh.read()
                self._offset = fh.tell()
        except OSError:
            return
        now = time.monotonic() - self.start
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            try:
                self.events.append((now, json.loads(line)))
            except ValueError:
                continue


@dataclass
class Timed:
    """One command: exit code, output and wall time (and peak RSS when sampled)."""

    args: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float
    rss: dict[str, int] = field(default_factory=dict)
    rss_count: dict[str, int] = field(default_factory=dict)
    events: list[tuple[float, dict]] = field(default_factory=list)
    cpu_busy_pct: float = 0.0

    @property
    def ok(self) -> bool:
        return self.code == 0

    def fail(self, what: str) -> BenchError:
        tail = "\n".join((self.stdout + "\n" + self.stderr).strip().splitlines()[-40:])
        return BenchError(f"{what} failed (exit {self.code}): {shlex.join(self.args[:3])} ...\n"
                          f"{redact(tail)}")


def _template(args: list[str], lab: Lab | None) -> str:
    """The command as recorded in BENCHMARKS.md: paths replaced by short names."""
    text = shlex.join(args)
    replacements = [(str(BENCH_LAB), ".lab-bench"), (str(REPO), "<repo>")]
    if lab is not None:
        replacements.insert(0, (str(lab.bin), "<toolchain>"))
    for old, new in replacements:
        text = text.replace(old, new)
    text = re.sub(r"t-bench-[0-9a-f]+-", "t-bench-<id>-", text)
    text = re.sub(r"(\.lab-bench/work/)[\w.-]+", r"\1<file>", text)
    return text if len(text) <= 200 else text[:200] + " ..."


def run(args: list[str], env: dict[str, str], *, lab: Lab | None = None,
        sample_rss: bool = False, event_log: Path | None = None, timeout: float = 3600,
        record: bool = True) -> Timed:
    """Runs a command to completion and times it; never raises for a non-zero exit.
    `sample_rss` samples its process tree's memory; `event_log` follows that file."""
    if record:
        COMMANDS.setdefault(_template(args, lab))
    start = time.monotonic()
    cpu = CpuMeter()
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sampler = RssSampler(proc.pid) if sample_rss else None
    tail = EventTail(event_log, start) if event_log else None
    if sampler:
        sampler.start()
    if tail:
        tail.start_thread()
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        seconds = time.monotonic() - start
        if sampler:
            sampler.stop()
        if tail:
            tail.stop()
    return Timed(args, proc.returncode, out, err, seconds,
                 dict(sampler.peak) if sampler else {},
                 dict(sampler.peak_count) if sampler else {},
                 tail.events if tail else [], cpu.busy_pct())


# --------------------------------------------------------------------------- the lab


def lab_cmd(*args: str, check: bool = True) -> None:
    """`python -m lab ...` against the bench lab (the env var is inherited)."""
    res = run([sys.executable, "-m", "lab", *args], dict(os.environ))
    if check and not res.ok:
        raise res.fail(f"python -m lab {' '.join(args)}")


# --------------------------------------------------------------------------- knative-fleet


class BenchStack(FleetStack):
    """A throwaway `t-bench-*` stack (its config file is ignored by git) in the bench
    lab's own file backend, timed command by command."""

    def __init__(self, lab: Lab, name: str, extra_args: list[str], extra_env: dict[str, str],
                 ) -> None:
        super().__init__(lab, name, BENCH_LAB / "state")
        # `--event-log` exists only with the CLI's debug commands on.
        self.env.update({"PULUMI_DEBUG_COMMANDS": "true", **extra_env})
        self.extra_args = extra_args

    def pulumi(self, *args: str, sample_rss: bool = False,
               event_log: str | None = None) -> Timed:
        """`pulumi ARGS` on this stack; `event_log` names a file in the work directory
        that the engine's event log goes to, followed while it runs."""
        extra = list(self.extra_args)
        path = BENCH_LAB / "work" / event_log if event_log else None
        if path:
            extra += ["--event-log", str(path)]
        return run(["pulumi", *args, *extra, "--stack", self.stack, "--non-interactive"],
                   self.env, lab=self.lab, sample_rss=sample_rss, event_log=path)

    def must(self, what: str, *args: str, sample_rss: bool = False,
             event_log: str | None = None) -> Timed:
        res = self.pulumi(*args, sample_rss=sample_rss, event_log=event_log)
        if not res.ok:
            raise res.fail(what)
        return res

    def install(self, event_log: str | None = None) -> Timed:
        return self.must("pulumi up", "up", "--yes", "--skip-preview", sample_rss=True,
                         event_log=event_log)

    def noop_preview(self, event_log: str | None = None) -> tuple[Timed, bool]:
        """`pulumi preview --diff --expect-no-changes`; (timing, whether it was a no-op)."""
        res = self.pulumi("preview", "--diff", "--expect-no-changes", event_log=event_log)
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
        res = run(["pulumi", "stack", "export", "--stack", self.stack, "--non-interactive"],
                  self.env, lab=self.lab)
        if not res.ok:
            raise res.fail("pulumi stack export")
        return len(res.stdout.encode()), json.loads(res.stdout)

    def checkpoint_bytes(self) -> int | None:
        """Size of the stack's checkpoint file in the file backend, as stored."""
        found = sorted((BENCH_LAB / "state" / ".pulumi" / "stacks").rglob(f"{self.stack}.json*"))
        found = [f for f in found if not f.name.endswith(".bak")]
        return found[0].stat().st_size if found else None

    def measure_state(self, samples: Samples, spokes: int) -> None:
        """Export bytes, the same JSON without whitespace, and the checkpoint file."""
        size, export = self.export()
        samples.add(f"state_bytes_{spokes}", size)
        samples.add(f"state_compact_bytes_{spokes}", _size(export))
        checkpoint = self.checkpoint_bytes()
        if checkpoint is not None:
            samples.add(f"state_checkpoint_bytes_{spokes}", checkpoint)
        samples.notes.setdefault(f"state_{spokes}", state_breakdown(export))

    def spokes_ready(self, names: list[str]) -> None:
        res = run(["pulumi", "stack", "output", "--json", "spokes", "--stack", self.stack,
                   "--non-interactive"], self.env, lab=self.lab, record=False)
        if not res.ok:
            raise res.fail("pulumi stack output")
        out = json.loads(res.stdout)
        not_ready = [n for n in names if not (out.get(n) or {}).get("ready")]
        if not_ready:
            raise BenchError(f"spokes not ready after pulumi up: {', '.join(not_ready)}")

    def drop(self) -> None:
        """Forgets the stack and deletes its config file (best effort)."""
        try:
            run(["pulumi", "stack", "rm", "--yes", "--force", "--stack", self.stack,
                 "--non-interactive"], self.env, lab=self.lab, record=False, timeout=120)
        finally:
            self.cleanup()


def bench_entry(spoke: str, config: dict | None = None) -> dict:
    """Serving (Kourier) + Eventing 1.23, CRDs deleted on destroy so that every run
    starts on a fresh spoke and destroy removes what `kubectl delete` removes."""
    e = entry(spoke)
    for component in ("serving", "eventing"):
        e[component]["deleteCrdsOnDestroy"] = True
    if config:
        e["serving"]["config"] = config
    return e


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode()) if value is not None else 0


def state_breakdown(export: dict) -> dict[str, Any]:
    """What the bytes of a `pulumi stack export` are: inputs, outputs, managedFields,
    per kind, and the largest resources."""
    resources = export.get("deployment", {}).get("resources") or []
    kube = [r for r in resources if r.get("type", "").startswith("kubernetes:")]
    by_kind: dict[str, list[int]] = defaultdict(list)
    managed = 0
    for r in kube:
        by_kind[r["type"].rpartition(":")[2]].append(_size(r))
        managed += _size(((r.get("outputs") or {}).get("metadata") or {}).get("managedFields"))
    return {
        "objects": len(kube),
        "inputs_bytes": sum(_size(r.get("inputs")) for r in kube),
        "outputs_bytes": sum(_size(r.get("outputs")) for r in kube),
        "managed_fields_bytes": managed,
        "by_kind": sorted(((k, len(v), sum(v)) for k, v in by_kind.items()),
                          key=lambda row: -row[2])[:8],
        "largest": sorted(((r["urn"].rsplit("::", 1)[-1], _size(r)) for r in kube),
                          key=lambda row: -row[1])[:5],
    }


# --------------------------------------------------------------------------- kubectl


def _kind_of(obj: dict) -> tuple[str, str]:
    return obj["apiVersion"].rpartition("/")[0], obj["kind"]


def _custom_kinds(crds: list[dict]) -> set[tuple[str, str]]:
    """(group, kind) the release's CRDs define (as components/spoke.py splits them)."""
    return {(c["spec"]["group"], c["spec"]["names"]["kind"]) for c in crds}


@dataclass
class Baseline:
    """The objects knative-fleet renders for one spoke, in the order components/spoke.py
    registers them, split into what is applied before the anchors' uids are known and
    what the anchors own."""

    first: list[dict]  # per component: namespace, CRDs, cluster-scoped, external, anchor
    owned: list[tuple[str, dict]]  # (anchor name, object): namespaced, plain then custom
    crds: list[str]
    anchors: list[tuple[str, str]]  # (namespace, name)
    deployments: dict[str, list[str]]  # namespace -> Deployment names

    @property
    def count(self) -> int:
        return len(self.first) + len(self.owned)


def render_baseline(fleet_entry: FleetEntry, release_base: str) -> Baseline:
    """The project's own plan for a fresh spoke (no install namespace exists yet)."""
    base = Baseline([], [], [], [], defaultdict(list))
    for plan in planning.plan_spoke(fleet_entry, release_base, {}):
        rendered = plan.rendered
        if plan.namespace_object is not None:
            base.first.append(plan.namespace_object)
        base.first.extend([*rendered.crds, *rendered.cluster_scoped, *rendered.external,
                           plan.anchor])
        base.crds.extend(c["metadata"]["name"] for c in rendered.crds)
        anchor = plan.anchor["metadata"]["name"]
        base.anchors.append((plan.namespace, anchor))
        custom = _custom_kinds(rendered.crds)
        plain = [o for o in rendered.namespaced if _kind_of(o) not in custom]
        later = [o for o in rendered.namespaced if _kind_of(o) in custom]
        base.owned.extend((anchor, o) for o in [*plain, *later])
        base.deployments[plan.namespace].extend(
            o["metadata"]["name"] for o in plain if o["kind"] == "Deployment")
    return base


class Kubectl:
    """kubectl against one spoke, with its admin kubeconfig from the lab."""

    def __init__(self, lab: Lab, spoke: str, work: Path) -> None:
        self.lab = lab
        self.env = tool_env(lab.bin, {"KUBECONFIG": lab.spoke(spoke).kubeconfig})
        self.work = work

    def __call__(self, *args: str, ok_codes: tuple[int, ...] = (0,)) -> Timed:
        res = run([str(self.lab.bin / "kubectl"), *args], self.env, lab=self.lab)
        if res.code not in ok_codes:
            raise res.fail(f"kubectl {args[0]}")
        return res

    def write(self, name: str, objects: list[dict]) -> Path:
        path = self.work / name
        path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
        return path

    def apply(self, path: Path) -> Timed:
        return self("apply", "--server-side", "--force-conflicts",
                    f"--field-manager={FIELD_MANAGER}", "-f", str(path))

    def install(self, base: Baseline) -> tuple[float, float, list[dict]]:
        """Apply + wait, timed as one; returns (seconds, machine CPU busy %, every object
        as applied)."""
        first = self.write("first.yaml", base.first)
        start = time.monotonic()
        cpu = CpuMeter()
        self.apply(first)
        self("wait", "--for=condition=Established", "--timeout=300s",
             *[f"crd/{name}" for name in base.crds])
        uids = {}
        for namespace, name in base.anchors:
            res = self("get", "configmap", "-n", namespace, name, "-o",
                       "jsonpath={.metadata.uid}")
            uids[name] = res.stdout.strip()
        owned = [manifests.with_owner(o, manifests.owner_reference(a, uids[a]))
                 for a, o in base.owned]
        self.apply(self.write("owned.yaml", owned))
        for namespace, names in base.deployments.items():
            self("wait", "--for=condition=Available", "--timeout=600s", "-n", namespace,
                 *[f"deployment/{n}" for n in names])
        return time.monotonic() - start, cpu.busy_pct(), [*base.first, *owned]

    def diff(self, objects: list[dict]) -> Timed:
        """`kubectl diff --server-side`: exit 0 no difference, 1 differences."""
        path = self.write("all.yaml", objects)
        return self("diff", "--server-side", "--force-conflicts",
                    f"--field-manager={FIELD_MANAGER}", "-f", str(path), ok_codes=(0, 1))

    def delete(self, objects: list[dict]) -> Timed:
        """Deletes the same objects, dependents first, and waits until they are gone."""
        path = self.write("delete.yaml", list(reversed(objects)))
        return self("delete", "--wait=true", "--ignore-not-found=true", "--timeout=600s",
                    "-f", str(path))


def assert_fresh(lab: Lab, spoke: str, work: Path) -> None:
    """The spoke has no install namespace and no Knative CRD left (a fresh spoke)."""
    kubectl = Kubectl(lab, spoke, work)
    res = run([str(lab.bin / "kubectl"), "get", "namespaces,crds", "-o", "name"],
              kubectl.env, record=False)
    if not res.ok:
        raise res.fail("kubectl get namespaces,crds")
    left = [line for line in res.stdout.split() if "knative" in line]
    if left:
        raise BenchError(f"{spoke} is not fresh: {', '.join(left[:5])}")


# --------------------------------------------------------------------------- measurements


@dataclass
class Samples:
    """Per-run samples of every figure, keyed like results.json."""

    values: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    flags: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, list[dict[str, int]]] = field(default_factory=lambda: defaultdict(list))
    notes: dict[str, Any] = field(default_factory=dict)  # run 1's analyses, for the report

    def add(self, key: str, value: float) -> None:
        self.values[key].append(value)
        log(f"  {key} = {value:.3f}")

    def median(self, key: str) -> float | None:
        got = self.values.get(key)
        return statistics.median(got) if got else None


def fleet_run(lab: Lab, stack: BenchStack, samples: Samples, run_no: int) -> None:
    """Measurements 1-4 with knative-fleet on FLEET_SPOKE."""
    stack.configure([bench_entry(FLEET_SPOKE)])
    log(f"run {run_no}: pulumi up (install, {FLEET_SPOKE})")
    control_plane = ControlPlaneCpu(lab, [FLEET_SPOKE])
    res = stack.install(f"install-{run_no}.jsonl")
    samples.add("install_fleet_s", res.seconds)
    samples.add("install_fleet_spoke_cpu_s", control_plane.seconds())
    samples.add("install_fleet_cpu_busy_pct", res.cpu_busy_pct)
    samples.rss["install"].append(res.rss)
    samples.notes.setdefault("events_install", analyse_events(res.events))
    stack.spokes_ready([FLEET_SPOKE])
    stack.measure_state(samples, 1)
    samples.add("resources_per_spoke", samples.notes["state_1"]["objects"])

    log(f"run {run_no}: pulumi preview (no-op)")
    res, clean = stack.noop_preview(f"noop-preview-{run_no}.jsonl")
    samples.add("noop_preview_fleet_s", res.seconds)
    samples.flags["noop_preview_clean"].append(clean)
    samples.notes.setdefault("events_noop_preview", analyse_events(res.events))

    log(f"run {run_no}: one ConfigMap key changed")
    stack.configure([bench_entry(FLEET_SPOKE, SMALL_CHANGE)])
    res = stack.must("pulumi preview", "preview", "--diff")
    samples.add("small_change_preview_s", res.seconds)
    res = stack.must("pulumi up", "up", "--yes", "--skip-preview")
    samples.add("small_change_up_s", res.seconds)
    namespace, name, key = SMALL_CHANGE_CM
    got = Kubectl(lab, FLEET_SPOKE, BENCH_LAB / "work")(
        "get", "configmap", "-n", namespace, name, "-o", "json")
    value = (json.loads(got.stdout).get("data") or {}).get(key)
    if value != SMALL_CHANGE["autoscaler"][key]:
        raise BenchError(f"the small change did not land: {name}.{key} = {value!r}")

    log(f"run {run_no}: pulumi destroy")
    res = stack.destroy(f"destroy-{run_no}.jsonl")
    samples.add("destroy_fleet_s", res.seconds)
    samples.notes.setdefault("events_destroy", analyse_events(res.events))
    assert_fresh(lab, FLEET_SPOKE, BENCH_LAB / "work")

    # The same install and destroy with Pulumi's default checkpointing (a full state
    # rewrite before and after every object step), for users who keep it on.
    saved = stack.env.pop(SKIP_CHECKPOINTS, None)
    try:
        log(f"run {run_no}: pulumi up with default checkpointing")
        res = stack.install()
        samples.add("install_fleet_checkpointed_s", res.seconds)
        log(f"run {run_no}: pulumi destroy with default checkpointing")
        res = stack.destroy()
        samples.add("destroy_fleet_checkpointed_s", res.seconds)
    finally:
        if saved is not None:
            stack.env[SKIP_CHECKPOINTS] = saved
    assert_fresh(lab, FLEET_SPOKE, BENCH_LAB / "work")


def kubectl_run(lab: Lab, base: Baseline, samples: Samples, run_no: int) -> None:
    """The same objects with kubectl on KUBECTL_SPOKE: apply + wait, diff, delete."""
    kubectl = Kubectl(lab, KUBECTL_SPOKE, BENCH_LAB / "work")
    log(f"run {run_no}: kubectl apply + wait ({KUBECTL_SPOKE}, {base.count} objects)")
    control_plane = ControlPlaneCpu(lab, [KUBECTL_SPOKE])
    seconds, busy, applied = kubectl.install(base)
    samples.add("install_kubectl_s", seconds)
    samples.add("install_kubectl_spoke_cpu_s", control_plane.seconds())
    samples.add("install_kubectl_cpu_busy_pct", busy)
    log(f"run {run_no}: kubectl diff --server-side")
    res = kubectl.diff(applied)
    samples.add("noop_diff_kubectl_s", res.seconds)
    samples.flags["noop_diff_kubectl_exit"].append(res.code)
    # `diff -u -N <dir>/LIVE-x/<group.version.Kind.namespace.name> <dir>/MERGED-x/...`
    differing = sorted({line.split()[3].rsplit("/", 1)[-1] for line in res.stdout.splitlines()
                        if line.startswith("diff ") and len(line.split()) > 3})
    samples.notes.setdefault("noop_diff_kubectl_objects", differing)
    log(f"run {run_no}: kubectl delete --wait")
    res = kubectl.delete(applied)
    samples.add("destroy_kubectl_s", res.seconds)
    assert_fresh(lab, KUBECTL_SPOKE, BENCH_LAB / "work")


def growth_run(lab: Lab, stack: BenchStack, samples: Samples, run_no: int) -> None:
    """Install, no-op preview and destroy of 1, 2 and 4 spokes in one stack."""
    for n in GROWTH:
        names = [f"spoke-{i}" for i in range(1, n + 1)]
        stack.configure([bench_entry(name) for name in names])
        log(f"run {run_no}: growth, {n} spoke(s): pulumi up")
        control_plane = ControlPlaneCpu(lab, names)
        res = stack.install(f"growth-install-{n}-{run_no}.jsonl")
        samples.add(f"growth_install_{n}_s", res.seconds)
        samples.add(f"growth_install_{n}_spokes_cpu_s", control_plane.seconds())
        samples.add(f"growth_install_{n}_cpu_busy_pct", res.cpu_busy_pct)
        samples.rss[f"growth_{n}"].append(res.rss)
        if n == GROWTH[-1]:
            samples.notes.setdefault(f"events_growth_install_{n}", analyse_events(res.events))
        stack.spokes_ready(names)
        stack.measure_state(samples, n)
        res, clean = stack.noop_preview(f"growth-preview-{n}-{run_no}.jsonl")
        samples.add(f"growth_preview_{n}_s", res.seconds)
        samples.flags[f"growth_preview_{n}_clean"].append(clean)
        log(f"run {run_no}: growth, {n} spoke(s): pulumi destroy")
        res = stack.destroy(f"growth-destroy-{n}-{run_no}.jsonl")
        samples.add(f"growth_destroy_{n}_s", res.seconds)
        samples.add(f"growth_destroy_{n}_cpu_busy_pct", res.cpu_busy_pct)
        if n == GROWTH[-1]:
            samples.notes.setdefault(f"events_growth_destroy_{n}", analyse_events(res.events))
        for name in names:
            assert_fresh(lab, name, BENCH_LAB / "work")


def program_child(n: int) -> dict[str, Any]:
    """Runs the program for `n` spokes under Pulumi mocks (no cluster, no engine), with
    spoke resolution faked as tests/unit/test_fleet_program.py does; the rest (planning,
    rendering, every resource registration) is the program's own code."""
    import pulumi
    import pulumi_kubernetes  # noqa: F401 - imported before the clock starts
    import pulumi_kubernetes.core.v1  # noqa: F401

    from access import SpokeConnection
    from components import fleet as fleet_mod

    registered = Counter()

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
            registered[args.typ.split(":")[0]] += 1
            outputs = dict(args.inputs)
            if args.typ == "kubernetes:core/v1:ConfigMap":
                outputs["metadata"] = {**args.inputs.get("metadata", {}),
                                       "uid": f"uid-{args.name}"}
            return f"{args.name}-id", outputs

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
            return {}

    conn = SpokeConnection(
        server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
        tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
        args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})
    cfg = parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [{"name": f"spoke-{i}", "clusterProfileRef": {"name": f"spoke-{i}",
                                                                "namespace": "fleet-system"},
                   "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}}
                  for i in range(1, n + 1)],
    })
    plan_seconds = [0.0]

    def fake_resolve(cfg: Any) -> list[Any]:
        start = time.perf_counter()
        out = [fleet_mod.SpokeResult(entry=e, connection=conn, server_version="v1.36.3",
                                     plans=planning.plan_spoke(e, cfg.release_base, {}))
               for e in cfg.fleet]
        plan_seconds[0] += time.perf_counter() - start
        return out

    fleet_mod.resolve_fleet = fake_resolve  # type: ignore[assignment]
    pulumi.runtime.set_mocks(Mocks(), preview=False)

    @pulumi.runtime.test
    def program() -> Any:
        spokes = fleet_mod.deploy(cfg)
        return pulumi.Output.all(*[s.ready for s in spokes.values()])

    releases.load_documents.cache_clear()
    start = time.perf_counter()
    program()  # returns once every registration has completed
    seconds = time.perf_counter() - start
    info = releases.load_documents.cache_info()
    return {
        "spokes": n,
        "ms": seconds * 1000,
        "plan_ms": plan_seconds[0] * 1000,
        "resources": sum(registered.values()),
        "load_documents_calls": info.hits + info.misses,
        "load_documents_parses": info.misses,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def program_run(samples: Samples, run_no: int) -> None:
    """The program's own time for 1, 10 and 100 spokes, each in a fresh process."""
    for n in PROGRAM_SIZES:
        log(f"run {run_no}: program under mocks, {n} spoke(s)")
        res = run([sys.executable, "-m", "bench.fleet", "--program-child", str(n)],
                  dict(os.environ))
        if not res.ok:
            raise res.fail(f"program under mocks ({n} spokes)")
        got = json.loads(res.stdout.strip().splitlines()[-1])
        samples.add(f"program_ms_{n}", got["ms"])
        samples.add(f"program_plan_ms_{n}", got["plan_ms"])
        samples.add(f"program_resources_{n}", got["resources"])
        samples.add(f"program_load_documents_calls_{n}", got["load_documents_calls"])
        samples.add(f"program_load_documents_parses_{n}", got["load_documents_parses"])
        samples.add(f"program_peak_rss_bytes_{n}", got["peak_rss_bytes"])


# --------------------------------------------------------------------------- analysis


def analyse_events(events: list[tuple[float, dict]]) -> dict[str, Any]:
    """Where a pulumi command spent its time, from its followed event log: per object
    the seconds from its step's start to its outputs, relative to the command's start."""
    starts: dict[str, float] = {}
    spans: list[tuple[str, str, float, float]] = []  # (kind, name, start, end)
    for at, event in events:
        if "resourcePreEvent" in event:
            meta = event["resourcePreEvent"].get("metadata") or {}
            if meta.get("urn"):
                starts[meta["urn"]] = at
        elif "resOutputsEvent" in event:
            meta = event["resOutputsEvent"].get("metadata") or {}
            urn, typ = meta.get("urn", ""), meta.get("type", "")
            if urn in starts and typ.startswith("kubernetes:") and \
                    not typ.startswith("pulumi:providers"):
                spans.append((typ.rpartition(":")[2], urn.rsplit("::", 1)[-1],
                              starts.pop(urn), at))
    if not spans:
        return {}
    end_all = max(at for at, _ in events)
    first = min(s for *_, s, _ in spans)
    last = max(e for *_, e in spans)
    # Cluster-scoped objects are named "<spoke>:<name>", namespaced "<spoke>:<ns>/<name>".
    cluster = [sp for sp in spans if "/" not in sp[1]]
    namespaced = [sp for sp in spans if "/" in sp[1] and not sp[1].endswith("-root-owner")]
    by_kind: dict[str, list[float]] = defaultdict(list)
    for kind, _, start, end in spans:
        by_kind[kind].append(end - start)
    ticks = sorted([(s, 1) for *_, s, _ in spans] + [(e, -1) for *_, e in spans],
                   key=lambda t: (t[0], t[1]))
    in_flight = peak = 0
    for _, delta in ticks:
        in_flight += delta
        peak = max(peak, in_flight)
    services = by_kind.get("Service", [])
    return {
        "total_s": end_all,
        "before_first_object_s": first,
        "objects_s": last - first,
        "after_last_object_s": end_all - last,
        "objects": len(spans),
        "cluster_scoped_done_s": max((e for *_, e in cluster), default=None),
        "namespaced_first_start_s": min((s for *_, s, _ in namespaced), default=None),
        "max_in_flight": peak,
        "mean_in_flight": sum(e - s for *_, s, e in spans) / max(last - first, 1e-9),
        "services": len(services),
        "service_mean_s": statistics.mean(services) if services else None,
        "by_kind": sorted(((k, len(v), sum(v), max(v)) for k, v in by_kind.items()),
                          key=lambda row: -row[2])[:10],
        "slowest": sorted(((f"{k} {n}", e - s) for k, n, s, e in spans),
                          key=lambda r: -r[1])[:6],
    }


# --------------------------------------------------------------------------- facts


def _first_line(args: list[str], env: dict[str, str]) -> str:
    try:
        out = subprocess.run(args, env=env, cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unavailable"
    return (out.strip().splitlines() or ["unavailable"])[0]


def machine_facts(lab: Lab, env: dict[str, str]) -> dict[str, Any]:
    """CPU, memory, load and tool versions, as flat keys."""
    meminfo = Path("/proc/meminfo").read_text()
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1))  # type: ignore[union-attr]
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    pins = dict(line.split("=", 1) for line in PINS.read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    kubectl = _first_line([str(lab.bin / "kubectl"), "version", "--client"], env)
    go = shutil.which("go", path=env.get("PATH"))
    return {
        "machine_cpu_count": os.cpu_count(),
        "machine_cpu_model": model.group(1).strip() if model else platform.processor(),
        "machine_memory_bytes": mem_kb * 1024,
        "machine_kernel": platform.release(),
        "python_version": platform.python_version(),
        "go_version": _first_line([go, "version"], env) if go else "not on PATH",
        "pulumi_version": _first_line(["pulumi", "version"], env),
        "pulumi_python_sdk_version": importlib.metadata.version("pulumi"),
        "pulumi_kubernetes_version": pins.get("PULUMI_KUBERNETES_VERSION", "unknown"),
        "pulumi_language_host_sdk_version": pins.get("PULUMI_LANGHOST_SDK_VERSION", "unknown"),
        "kubectl_version": kubectl.removeprefix("Client Version: "),
        "kubernetes_version": pins.get("K8S_VERSION", "unknown"),
        "kwok_version": pins.get("KWOK_VERSION", "unknown"),
    }


def pulumi_default_parallel(env: dict[str, str]) -> str:
    """The CLI's default for `--parallel`, read from its own help."""
    out = subprocess.run(["pulumi", "up", "--help"], env=env, cwd=REPO, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
    m = re.search(r"--parallel int32.*\(default (\d+)\)", out)
    return m.group(1) if m else "unknown"


# --------------------------------------------------------------------------- results


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _peak(rss_runs: list[dict[str, int]], kind: str) -> float | None:
    got = [r.get(kind, 0) for r in rss_runs if r]
    return statistics.median(got) if got else None


def summarise(samples: Samples, spokes_for_rss: int) -> dict[str, Any]:
    """Medians of every sample, and the derived ratios and per-spoke figures."""
    out: dict[str, Any] = {key: samples.median(key) for key in sorted(samples.values)}
    out["install_ratio"] = _ratio(out.get("install_fleet_s"), out.get("install_kubectl_s"))
    out["install_checkpointed_ratio"] = _ratio(out.get("install_fleet_checkpointed_s"),
                                               out.get("install_kubectl_s"))
    out["noop_preview_ratio"] = _ratio(out.get("noop_preview_fleet_s"),
                                       out.get("noop_diff_kubectl_s"))
    out["destroy_ratio"] = _ratio(out.get("destroy_fleet_s"), out.get("destroy_kubectl_s"))
    out["growth_4_vs_1"] = _ratio(out.get("growth_install_4_s"), out.get("growth_install_1_s"))
    out["growth_preview_4_vs_1"] = _ratio(out.get("growth_preview_4_s"),
                                          out.get("growth_preview_1_s"))
    out["growth_destroy_4_vs_1"] = _ratio(out.get("growth_destroy_4_s"),
                                          out.get("growth_destroy_1_s"))
    small, big = PROGRAM_SIZES[0], PROGRAM_SIZES[-1]
    if out.get(f"program_ms_{big}") is not None:
        extra = big - small
        out["program_ms_per_spoke"] = (out[f"program_ms_{big}"] - out[f"program_ms_{small}"]) \
            / extra
        out["program_plan_ms_per_spoke"] = (out[f"program_plan_ms_{big}"]
                                            - out[f"program_plan_ms_{small}"]) / extra
        out["program_resources_per_spoke"] = out[f"program_resources_{big}"] / big
        sizes = list(PROGRAM_SIZES)
        for lo, hi in zip(sizes, sizes[1:], strict=False):
            out[f"program_ms_per_spoke_{lo}_to_{hi}"] = \
                (out[f"program_ms_{hi}"] - out[f"program_ms_{lo}"]) / (hi - lo)
        out["program_ms_per_resource"] = out["program_ms_per_spoke"] \
            / out["program_resources_per_spoke"]
    state_n = max((n for n in GROWTH if out.get(f"state_bytes_{n}") is not None), default=0)
    if state_n:
        out["state_spokes"] = state_n
        for kind in ("", "compact_", "checkpoint_"):
            if out.get(f"state_{kind}bytes_{state_n}") is not None:
                out[f"state_{kind}bytes_per_spoke"] = out[f"state_{kind}bytes_{state_n}"] \
                    / state_n
    rss_runs = samples.rss.get(f"growth_{spokes_for_rss}") or samples.rss.get("install") or []
    rss_spokes = spokes_for_rss if samples.rss.get(f"growth_{spokes_for_rss}") else 1
    if rss_runs:
        out["peak_rss_spokes"] = rss_spokes
        for kind in ("total", "engine", "language_host", "program", "provider"):
            out[f"peak_rss_bytes_{kind}"] = _peak(rss_runs, kind)
        out["peak_rss_bytes_per_spoke"] = out["peak_rss_bytes_total"] / rss_spokes
        one = samples.rss.get("growth_1")
        if rss_spokes > 1 and one:
            out["peak_rss_bytes_per_extra_spoke"] = (
                (out["peak_rss_bytes_total"] - _peak(one, "total")) / (rss_spokes - 1))
    for key, values in samples.flags.items():
        out[key] = values[0] if len(set(values)) == 1 else ",".join(str(v) for v in values)
    for key, _, limit in TARGETS:
        value = out.get(key)
        out[f"target_{key}"] = None if value is None else ("PASS" if value <= limit else "MISS")
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def _fmt(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    if key.endswith("_bytes") or "_bytes_" in key:
        return f"{value / 1_000_000:.2f} MB"
    if key.endswith("_s"):
        return f"{value:.1f} s"
    if key.endswith("_pct"):
        return f"{value:.0f} %"
    if key.startswith("program_ms") or key.endswith("_ms") or "_ms_" in key:
        return f"{value:.0f} ms"
    if "ratio" in key or "_vs_" in key:
        return f"{value:.2f}x"
    return f"{value:g}" if isinstance(value, float) else str(value)


ROWS: tuple[tuple[str, str], ...] = (
    ("install_fleet_s", "1. install: first `pulumi up`, 1 spoke"),
    ("install_kubectl_s", "1. install: kubectl apply --server-side + wait"),
    ("install_ratio", "1. install ratio (fleet / kubectl)"),
    ("install_fleet_cpu_busy_pct", "1. machine CPU busy during `pulumi up`"),
    ("install_fleet_spoke_cpu_s", "1. the spoke's control plane CPU during `pulumi up`"),
    ("install_kubectl_spoke_cpu_s", "1. the spoke's control plane CPU during kubectl"),
    ("install_kubectl_cpu_busy_pct", "1. machine CPU busy during kubectl"),
    ("install_fleet_checkpointed_s", "1. install with Pulumi's default checkpointing"),
    ("install_checkpointed_ratio", "1.   its ratio (fleet / kubectl)"),
    ("noop_preview_fleet_s", "2. no-op `pulumi preview --diff`"),
    ("noop_diff_kubectl_s", "2. `kubectl diff --server-side`"),
    ("noop_preview_ratio", "2. no-op review ratio"),
    ("small_change_preview_s", "3. one ConfigMap key: `pulumi preview`"),
    ("small_change_up_s", "3. one ConfigMap key: `pulumi up`"),
    ("destroy_fleet_s", "4. `pulumi destroy`"),
    ("destroy_kubectl_s", "4. `kubectl delete --wait`"),
    ("destroy_ratio", "4. destroy ratio"),
    ("destroy_fleet_checkpointed_s", "4. destroy with Pulumi's default checkpointing"),
    ("growth_install_1_s", "5. install, 1 spoke"),
    ("growth_install_2_s", "5. install, 2 spokes"),
    ("growth_install_4_s", "5. install, 4 spokes"),
    ("growth_4_vs_1", "5. install 4 / 1"),
    ("growth_install_1_cpu_busy_pct", "5. machine CPU busy, install 1 spoke"),
    ("growth_install_4_cpu_busy_pct", "5. machine CPU busy, install 4 spokes"),
    ("growth_install_1_spokes_cpu_s", "5. spokes' control planes CPU, install 1 spoke"),
    ("growth_install_4_spokes_cpu_s", "5. spokes' control planes CPU, install 4 spokes"),
    ("growth_preview_1_s", "5. no-op preview, 1 spoke"),
    ("growth_preview_2_s", "5. no-op preview, 2 spokes"),
    ("growth_preview_4_s", "5. no-op preview, 4 spokes"),
    ("growth_preview_4_vs_1", "5. no-op preview 4 / 1"),
    ("growth_destroy_1_s", "5. destroy, 1 spoke"),
    ("growth_destroy_2_s", "5. destroy, 2 spokes"),
    ("growth_destroy_4_s", "5. destroy, 4 spokes"),
    ("growth_destroy_4_vs_1", "5. destroy 4 / 1"),
    ("program_ms_1", "5. program under mocks, 1 spoke"),
    ("program_ms_10", "5. program under mocks, 10 spokes"),
    ("program_ms_100", "5. program under mocks, 100 spokes"),
    ("program_ms_per_spoke", "5. program time per extra spoke"),
    ("program_ms_per_spoke_1_to_10", "5.   per extra spoke, 1 -> 10"),
    ("program_ms_per_spoke_10_to_100", "5.   per extra spoke, 10 -> 100"),
    ("program_plan_ms_100", "5.   of which planning, all 100 spokes"),
    ("program_load_documents_calls_100", "5. load_documents calls, 100 spokes"),
    ("program_load_documents_parses_100", "5. release files parsed, 100 spokes"),
    ("peak_rss_bytes_total", "5. peak RSS of `pulumi up`, whole tree"),
    ("peak_rss_bytes_per_spoke", "5. peak RSS per spoke"),
    ("state_bytes_per_spoke", "5. `pulumi stack export` per spoke"),
    ("state_compact_bytes_per_spoke", "5.   same JSON without whitespace"),
    ("state_checkpoint_bytes_per_spoke", "5.   file backend checkpoint"),
)


def table(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, key, value, target verdict) rows; targets only where one is set."""
    limits = {key: label for key, label, _ in TARGETS}
    rows = []
    for key, label in ROWS:
        verdict = results.get(f"target_{key}") or ""
        if key in limits:
            verdict = f"{verdict or 'n/a'} ({limits[key]})"
        rows.append((label, key, _fmt(key, results.get(key)), verdict))
    return rows


def print_table(results: dict[str, Any]) -> None:
    rows = table(results)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    print()
    for label, key, value, verdict in rows:
        print(f"{label:<{widths[0]}}  {key:<{widths[1]}}  {value:>{widths[2]}}  {verdict}")
    print()


def _time_sections(notes: dict[str, Any], settings: dict[str, str]) -> list[str]:
    """One table per followed pulumi command of run 1: phases, kinds, slowest objects."""
    lines: list[str] = []
    big = GROWTH[-1]
    titles = {"events_install": "install `pulumi up`, 1 spoke",
              "events_noop_preview": "no-op `pulumi preview`, 1 spoke",
              "events_destroy": "`pulumi destroy`, 1 spoke",
              f"events_growth_install_{big}": f"install `pulumi up`, {big} spokes",
              f"events_growth_destroy_{big}": f"`pulumi destroy`, {big} spokes"}
    for key, title in titles.items():
        ev = notes.get(key)
        if not ev:
            continue

        def sec(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.1f} s"

        lines += [
            "", f"## Where the time goes: {title} (run 1)", "",
            "From the engine's event log, followed while the command ran (0.05 s polls); "
            "an object's time runs from its step's start to its outputs, so it includes "
            "the provider's await.", "",
            "| phase | value |", "|---|---|",
            f"| whole command | {sec(ev['total_s'])} |",
            "| start to first object step (CLI, plugins, program, spoke resolution) | "
            f"{sec(ev['before_first_object_s'])} |",
            f"| first object step to last object done | {sec(ev['objects_s'])} |",
            f"| last object done to end | {sec(ev['after_last_object_s'])} |",
            f"| object steps | {ev['objects']} |",
            f"| last cluster-scoped object done (from start) | "
            f"{sec(ev['cluster_scoped_done_s'])} |",
            f"| first namespaced object started (from start) | "
            f"{sec(ev['namespaced_first_start_s'])} |",
            f"| steps in flight: max / mean | {ev['max_in_flight']} / "
            f"{ev['mean_in_flight']:.1f} (`--parallel` {settings.get('parallel')}) |",
            f"| Services: count / mean seconds each | {ev['services']} / "
            f"{sec(ev['service_mean_s'])} |",
            "", "| kind | steps | sum of seconds | slowest |", "|---|---|---|---|",
        ]
        lines += [f"| {k} | {n} | {total:.1f} | {slowest:.1f} |"
                  for k, n, total, slowest in ev["by_kind"]]
        lines += ["", "Slowest: " + ", ".join(
            f"`{name}` {secs:.1f} s" for name, secs in ev["slowest"]) + "."]
    return lines


def _mb(size: float) -> str:
    return f"{size / 1_000_000:.2f} MB"


def _state_section(notes: dict[str, Any]) -> list[str]:
    """What the exported state of the largest measured stack is made of."""
    n = max((int(k.split("_")[1]) for k in notes if k.startswith("state_")), default=0)
    st = notes.get(f"state_{n}")
    if not st:
        return []
    lines = ["", f"## What the state holds ({n} spoke(s), run 1)", "",
             "| part | size |", "|---|---|",
             f"| objects | {st['objects']} |",
             f"| inputs, all objects | {_mb(st['inputs_bytes'])} |",
             f"| outputs, all objects | {_mb(st['outputs_bytes'])} |",
             f"| of which outputs' metadata.managedFields | {_mb(st['managed_fields_bytes'])} |",
             "", "| kind | objects | bytes |", "|---|---|---|"]
    lines += [f"| {k} | {count} | {_mb(size)} |" for k, count, size in st["by_kind"]]
    lines += ["", "Largest: " + ", ".join(f"`{name}` {_mb(size)}"
                                          for name, size in st["largest"]) + "."]
    return lines


def write_markdown(results: dict[str, Any], samples: Samples, argv: list[str],
                   settings: dict[str, str]) -> None:
    """BENCHMARKS.md, every figure from `results` and `samples`."""
    runs = results["runs"]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `{shlex.join(['python', '-m', 'bench.fleet', *argv])}` on "
        f"{results['date']} (`make bench` runs it with the defaults). Do not edit: run it again.",
        "",
    ]
    if runs < 3 or results["quick"]:
        lines += ["**Quick check (fewer than 3 runs or `--quick`): not a benchmark result.**", ""]
    lines += [
        f"Each figure is the median of {runs} run(s). Lab: a hub and {SPOKES} spokes, kwok "
        "`--runtime binary` clusters (real kube-apiserver, etcd, controller-manager, "
        "scheduler; fake nodes), in `.lab-bench/`. Release: Serving 1.23 with Kourier + "
        "Eventing 1.23 from the offline mirror.",
        "",
        "| figure | key | value | target |",
        "|---|---|---|---|",
    ]
    lines += [f"| {label} | `{key}` | {value} | {verdict} |"
              for label, key, value, verdict in table(results)]
    lines += ["", "## Per-run samples", "", "| key | samples |", "|---|---|"]
    for key in sorted(samples.values):
        lines.append(f"| `{key}` | {', '.join(_fmt(key, v) for v in samples.values[key])} |")
    for key, values in sorted(samples.flags.items()):
        lines.append(f"| `{key}` | {', '.join(str(v) for v in values)} |")
    if results.get("peak_rss_bytes_total") is not None:
        lines += ["", "## Peak RSS by process kind", "",
                  f"During the `pulumi up` of {results.get('peak_rss_spokes', 'n/a')} spoke(s), "
                  "/proc of the process tree sampled every 0.2 s, VmRSS summed per kind "
                  "(peak of each kind, taken separately).", "",
                  "| kind | peak |", "|---|---|"]
        for kind in ("total", "engine", "language_host", "program", "provider"):
            value = results.get(f"peak_rss_bytes_{kind}")
            lines.append(f"| {kind} | {_fmt('peak_rss_bytes_', value)} |")
        if results.get("peak_rss_bytes_per_extra_spoke") is not None:
            lines.append("| per extra spoke (4 spokes vs 1) | "
                         f"{_fmt('x_bytes', results['peak_rss_bytes_per_extra_spoke'])} |")
    lines += _time_sections(samples.notes, settings)
    lines += _state_section(samples.notes)
    differing = samples.notes.get("noop_diff_kubectl_objects")
    if differing:
        lines += ["", f"`kubectl diff` (run 1) reported {len(differing)} object(s) as "
                  "different from what was just applied: "
                  + ", ".join(f"`{d}`" for d in differing[:20])
                  + (" ..." if len(differing) > 20 else "") + "."]
    lines += ["", "## Machine", "", "| fact | value |", "|---|---|"]
    for key in sorted(results):
        if key.startswith(("machine_", "python_", "go_", "pulumi_", "kubectl_", "kubernetes_",
                           "kwok_", "load_")):
            value = results[key]
            if key == "machine_memory_bytes":
                value = f"{value / 2**30:.1f} GiB"
            lines.append(f"| {key} | {value} |")
    lines += ["", "## Settings", "", "| setting | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in settings.items()]
    lines += [
        "", "## Method", "",
        f"1. Install: knative-fleet's first `pulumi up --skip-preview` on fresh {FLEET_SPOKE} "
        f"(the run ends when every Deployment is Available) against kubectl on fresh "
        f"{KUBECTL_SPOKE} with exactly the objects `knative.plan.plan_spoke` renders, "
        "in the order components/spoke.py registers them: per component the namespace, "
        "CRDs, cluster-scoped and external objects and the anchor in one `kubectl apply "
        "--server-side`, `kubectl wait` for the CRDs to be Established, the anchors' uids "
        "read, then every namespaced object with its "
        "ownerReference to its anchor set (as knative-fleet sets it; plain objects, then the "
        "release's own custom resources) in a second apply, then `kubectl wait "
        "--for=condition=Available` for the same Deployments. kubectl gets the rendered "
        "objects without knative-fleet's `pulumi.com/*` provider annotations.",
        "2. No-op review: `pulumi preview --diff --expect-no-changes` against "
        "`kubectl diff --server-side` of the same objects (as applied, owners included).",
        f"3. Small change: the entry's `config` sets {SMALL_CHANGE_CM[1]} "
        f"{SMALL_CHANGE_CM[2]}; `pulumi preview --diff`, then `pulumi up`; the value is "
        "checked on the spoke.",
        "4. Destroy: `pulumi destroy` (entries have `deleteCrdsOnDestroy: true`, so both "
        "sides delete the same objects and every run starts on a fresh spoke) against "
        "`kubectl delete --wait` of the same objects, dependents first.",
        "5. Growth: one stack with 1, 2 and 4 entries: install, no-op preview, destroy. "
        "Program: `__main__`'s `deploy()` for 1, 10 and 100 spokes under "
        "`pulumi.runtime.set_mocks` in a fresh process each, spoke resolution faked as in "
        "tests/unit/test_fleet_program.py (planning, rendering and every registration "
        "real); per extra spoke = (t(100) - t(1)) / 99; release files parsed = "
        "`releases.load_documents` cache misses. State: `pulumi stack export` bytes of "
        "the largest stack / its spokes.",
        "",
        "The fleet and kubectl sides of each run alternate which goes first. Other jobs "
        "may share the machine; the load averages above were taken at start and end.",
        "", "## Commands", "",
    ]
    lines += [f"- `{command}`" for command in COMMANDS]
    BENCHMARKS_MD.write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------- main


def _on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@dataclass
class Session:
    """Everything created by one benchmark, so that teardown can remove exactly it."""

    stacks: list[BenchStack] = field(default_factory=list)

    def stack(self, lab: Lab, suffix: str, args: argparse.Namespace,
              run_id: str) -> BenchStack:
        extra_args = ["--parallel", str(args.parallel)] if args.parallel else []
        extra_env = {}
        if args.qps:
            extra_env["PULUMI_K8S_CLIENT_QPS"] = str(args.qps)
        if args.burst:
            extra_env["PULUMI_K8S_CLIENT_BURST"] = str(args.burst)
        stack = BenchStack(lab, f"t-bench-{run_id}-{suffix}", extra_args, extra_env)
        self.stacks.append(stack)
        stack.init()
        return stack


def benchmark(args: argparse.Namespace, argv: list[str]) -> int:
    """Lab up, measurements, lab down (always), then the table and the two files."""
    run_id = uuid.uuid4().hex[:6]
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    session, samples = Session(), Samples()
    facts: dict[str, Any] = {}
    settings: dict[str, str] = {}
    failed = True
    try:
        log("lab: removing any earlier bench lab, then up: a hub and "
            f"{SPOKES} spokes in {BENCH_LAB}")
        lab_cmd("down", check=False)
        for leftover in ("state", "work", "dump"):
            shutil.rmtree(BENCH_LAB / leftover, ignore_errors=True)
        (BENCH_LAB / "work").mkdir(parents=True)
        lab_cmd("up", "--spokes", str(SPOKES))
        lab = ensure_lab()
        main_stack = session.stack(lab, "main", args, run_id)
        facts = machine_facts(lab, main_stack.env)
        default_parallel = pulumi_default_parallel(main_stack.env)
        settings = {
            "parallel": str(args.parallel) if args.parallel
            else f"{default_parallel} (CLI default)",
            "provider_qps": f"{args.qps:g}" if args.qps else "provider default",
            "provider_burst": str(args.burst) if args.burst else "provider default",
            "engine_env": f"{SKIP_CHECKPOINTS}={main_stack.env.get(SKIP_CHECKPOINTS, 'unset')}"
                          " (the README's setting; rows marked 'default checkpointing' unset it)",
        }
        cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                                  "fleet": [bench_entry(KUBECTL_SPOKE)]})
        base = render_baseline(cfg.fleet[0], cfg.release_base)
        for run_no in range(1, args.runs + 1):
            steps = [lambda r=run_no: fleet_run(lab, main_stack, samples, r),
                     lambda r=run_no: kubectl_run(lab, base, samples, r)]
            for step in steps if run_no % 2 else reversed(steps):
                step()
        if not args.quick:
            growth = session.stack(lab, "growth", args, run_id)
            for run_no in range(1, args.runs + 1):
                growth_run(lab, growth, samples, run_no)
        for run_no in range(1, args.runs + 1):
            program_run(samples, run_no)
        failed = False
    except BenchError as exc:
        log(f"FAILED: {exc}")
    finally:
        for stack in session.stacks:
            try:
                stack.drop()
            except Exception as exc:  # noqa: BLE001 - teardown goes on
                log(f"could not remove stack {stack.stack}: {type(exc).__name__}")
        if failed:
            lab_cmd("dump", "--out", str(BENCH_LAB / "dump"), check=False)
            log(f"lab logs and events kept in {BENCH_LAB / 'dump'}")
        log("lab: down")
        lab_cmd("down", check=False)
        if not failed:
            shutil.rmtree(BENCH_LAB, ignore_errors=True)
    if failed:
        return 1
    results: dict[str, Any] = {
        "date": date,
        "command": shlex.join(["python", "-m", "bench.fleet", *argv]),
        "runs": args.runs,
        "quick": args.quick,
        **facts,
        "machine_load_start": load_start,
        "machine_load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        **{f"settings_{k}": v for k, v in settings.items()},
        **summarise(samples, GROWTH[-1] if not args.quick else 1),
    }
    print_table(results)
    RESULTS_JSON.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    write_markdown(results, samples, argv, settings)
    log(f"wrote {BENCHMARKS_MD.relative_to(REPO)} and {RESULTS_JSON.relative_to(REPO)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parses the flags, runs every measurement, writes the results."""
    parser = argparse.ArgumentParser(prog="python -m bench.fleet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--quick", action="store_true",
                        help="skip the growth measurements on 1, 2 and 4 spokes")
    parser.add_argument("--parallel", type=int, default=0,
                        help="pass --parallel N to every pulumi up/preview/destroy")
    parser.add_argument("--qps", type=float, default=0,
                        help="PULUMI_K8S_CLIENT_QPS for the provider (default: its own)")
    parser.add_argument("--burst", type=int, default=0,
                        help="PULUMI_K8S_CLIENT_BURST for the provider (default: its own)")
    parser.add_argument("--program-child", type=int, help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.program_child:
        print(json.dumps(program_child(args.program_child)))
        return 0
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    signal.signal(signal.SIGTERM, _on_sigterm)
    return benchmark(args, argv)


if __name__ == "__main__":
    sys.exit(main())
