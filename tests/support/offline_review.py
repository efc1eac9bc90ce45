"""Running both reviews of one stack on a lab, as CI would: the live `python -m review`
(pulumi preview against the hub and every spoke) and the offline one (a ClusterProfile
snapshot and `pulumi stack export`, then no cluster at all), each timed with its peak
memory."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from lab.fleet import STACKS, FleetStack
from lab.paths import REPO

Change = tuple[str, str, str, str]  # (spoke, resource type, name, op)


@dataclass(frozen=True)
class Run:
    """One review: its report.json, exit code, wall seconds and peak memory (MiB of the
    largest process it waited for)."""

    report: dict
    code: int
    seconds: float
    peak_mib: float
    output: str


def changes(report: dict) -> set[Change]:
    """Every changed object of every spoke, and of the fleet, in a report.json."""
    return {(s["name"], o["type"], o["name"], o["op"])
            for s in report["spokes"] for o in s["objects"]} | {
        ("(fleet)", o["type"], o["name"], o["op"]) for o in report["fleet"]}


def _timed(cmd: list[str], env: dict[str, str], out: Path) -> Run:
    """Runs cmd in its own process (and its children in theirs) and reads the children's
    accounting: the peak is that of the largest process, as the kernel reports it."""
    script = ("import resource, subprocess, sys, time\n"
              "t = time.monotonic()\n"
              "code = subprocess.run(sys.argv[1:]).returncode\n"
              "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
              "print('TIMING', time.monotonic() - t, r.ru_maxrss, code)\n")
    done = subprocess.run([sys.executable, "-c", script, *cmd], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1800, check=False)
    line = next(x for x in done.stdout.splitlines() if x.startswith("TIMING"))
    _, seconds, peak_kib, code = line.split()
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() \
        else {}
    return Run(report, int(code), float(seconds), int(peak_kib) / 1024,
               done.stdout + done.stderr)


def live_review(stack: FleetStack, out: Path) -> Run:
    """`python -m review` as `make review` runs it: the preview reaches every spoke."""
    return _timed([sys.executable, "-m", "review", "--stack", stack.stack, "--out", str(out)],
                  stack.env, out)


def snapshot_profiles(stack: FleetStack, path: Path) -> None:
    """`python -m review profiles --stack S > path` (the hub's ClusterProfiles)."""
    done = subprocess.run([sys.executable, "-m", "review", "profiles", "--stack", stack.stack],
                          cwd=REPO, env=stack.env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    path.write_text(done.stdout)


def export_state(stack: FleetStack, path: Path) -> None:
    """`pulumi stack export --file path`: the backend only, no cluster."""
    res = stack.run("stack", "export", "--file", str(path))
    assert res.ok, res.why


def closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unreachable_stack_file(stack: FleetStack, where: Path) -> Path:
    """A copy of the stack's file whose hub is a kubeconfig naming a closed port and
    whose access-provider file does not exist: nothing it names can be reached."""
    where.mkdir(parents=True, exist_ok=True)
    hub = where / "closed-hub.kubeconfig"
    hub.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "closed",
        "clusters": [{"name": "closed", "cluster": {
            "server": f"https://127.0.0.1:{closed_port()}"}}],
        "contexts": [{"name": "closed", "context": {"cluster": "closed", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "nothing"}}]}))
    doc = yaml.safe_load(stack.config_file(STACKS).read_text())
    doc["config"]["knative-fleet:hub"] = {"kubeconfig": str(hub)}
    doc["config"]["knative-fleet:providerFile"] = str(where / "no-such-providers.json")
    copy = where / f"Pulumi.{stack.stack}.yaml"
    copy.write_text(yaml.safe_dump(doc, sort_keys=False))
    return copy


def offline_review(stack: FleetStack, profiles: Path, state: Path, out: Path,
                   hidden_clusters: bool = True) -> Run:
    """The offline review; with `hidden_clusters`, from a copy of the stack file whose hub
    and provider file cannot be reached (unreachable_stack_file), with no kubeconfig and
    an empty PATH (no exec plugin, no pulumi, no kubectl) in its environment."""
    env = dict(stack.env)
    args = [sys.executable, "-m", "review", "--stack", stack.stack, "--offline",
            "--profiles", str(profiles), "--state", str(state), "--out", str(out)]
    if hidden_clusters:
        env = {k: v for k, v in env.items() if k not in ("KUBECONFIG", "PULUMI_HOME")}
        env["PATH"] = ""
        args += ["--config", str(unreachable_stack_file(stack, out.parent / "unreachable"))]
    return _timed(args, env, out)
