"""kwokctl binary-runtime clusters: create, start, delete, logs.

Every cluster listens on 127.0.0.1 only and gets fake nodes, so the real
kube-controller-manager and kube-scheduler make Deployments Available, Jobs
complete, namespaces finish deleting and ownerReferences garbage-collected.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import yaml
from kubernetes import client, config

from lab.kwok_stages import stage_documents
from lab.paths import LabDir, lab_dir
from lab.toolchain import webhook_commands
from lab.webhooks.egress import egress_configuration, socket_path

KWOKCTL_CONFIG = """\
kind: KwokctlConfiguration
apiVersion: config.kwok.x-k8s.io/v1alpha1
options:
  bindAddress: 127.0.0.1
  # A node lease of 40 s (8 x kwokctl's heartbeatFactor of 5) instead of kwokctl's 200 s.
  # A restarted kwok controller waits for its predecessor's node leases to expire before
  # it plays any pod, so a spoke restarted by a test would sit with Pending pods for over
  # three minutes.
  nodeLeaseDurationSeconds: 8
"""
COMPONENTS = (
    "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller",
)
FAKE_NODES = 2
# A lab brought up with `--webhooks` runs webhook admission, as every real spoke does: the
# lab's webhook host (lab.webhooks) runs Knative's webhooks for the pods kwok plays, and
# kube-apiserver reaches them at their pod's address (aggregator routing: a Service's
# endpoint, not its cluster IP, which nothing routes here) through its `cluster` egress, the
# host's proxy. Any other lab skips webhook admission: no webhook of a release answers there.
NO_WEBHOOK_ADMISSION = (
    "kube-apiserver=disable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook"
)
AGGREGATOR_ROUTING = "kube-apiserver=enable-aggregator-routing=true"
EGRESS_FLAG = "kube-apiserver=egress-selector-config-file="
# kwokctl picks each component's port free when it writes the cluster's config; a second
# kwokctl starting beside it (another lab, a test run) can take that port before the
# component binds it. Then a component cannot listen, or this cluster's client reaches the
# other cluster's apiserver and refuses its certificate. Creating anew picks new ports.
PORT_RACE_SIGNS = ("address already in use", "x509:", "certificate signed by unknown authority")
CREATE_ATTEMPTS = 3
# Ports are the machine's, not a checkout's: every lab on this machine (another checkout,
# another CI job) creates and starts its clusters one at a time under this lock, from
# kwokctl picking free ports to every component listening on them.
PORTS_LOCK = Path(tempfile.gettempdir()) / "knative-fleet-lab-ports.lock"


@contextlib.contextmanager
def machine_ports_lock(path: Path = PORTS_LOCK) -> Iterator[None]:
    """Held while one cluster of any lab on this machine picks and binds its ports."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)  # another user's lab takes the same lock
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def lost_a_port_race(output: str) -> bool:
    """Whether kwokctl's output says a port it picked was taken by another process."""
    return any(sign in output for sign in PORT_RACE_SIGNS)


def answers(kubeconfig: str | Path) -> bool:
    """Whether the cluster's apiserver answers a request within a few seconds."""
    try:
        api = config.new_client_from_config(config_file=str(kubeconfig))
        client.CoreV1Api(api).list_namespace(_request_timeout=5, limit=1)
        return True
    except Exception:  # noqa: BLE001 - any failure means "does not answer"
        return False


class Kwok:
    """Runs kwokctl against one lab's own work directory (the default lab's unless told)."""

    def __init__(self, bin_path: Path, env: dict[str, str], lab: LabDir | None = None) -> None:
        self.bin = bin_path
        self.lab = lab or lab_dir()
        self.env = dict(env, KWOK_WORKDIR=str(self.lab.kwok))

    def run(self, *args: str, check: bool = True, capture: bool = True) -> str:
        proc = subprocess.run(
            [str(self.bin / "kwokctl"), *args],
            env=self.env,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.STDOUT if capture else None,
            text=True,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"kwokctl {' '.join(args)} failed:\n{proc.stdout or ''}")
        return proc.stdout or ""

    def clusters(self) -> list[str]:
        return [line.strip() for line in self.run("get", "clusters").splitlines() if line.strip()]

    def kubeconfig_path(self, name: str) -> Path:
        return self.lab.kubeconfig(name)

    def create(self, name: str) -> float:
        """Creates cluster `name` with fake nodes; returns the seconds it took. A create
        that lost a port to another process is deleted and made again."""
        start = time.monotonic()
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            try:
                with machine_ports_lock():
                    self._create_once(name)
                break
            except RuntimeError as exc:
                if attempt == CREATE_ATTEMPTS or not lost_a_port_race(str(exc)):
                    raise
                print(f"lab: cluster {name} lost a port to another process (attempt "
                      f"{attempt} of {CREATE_ATTEMPTS}); creating it again", file=sys.stderr)
                self.delete(name)
        return time.monotonic() - start

    def egress_config(self, name: str) -> Path:
        return self.lab.egress / f"{name}.yaml"

    def _create_once(self, name: str) -> None:
        config = self.lab.kwokctl_config
        admission = ["--extra-args", NO_WEBHOOK_ADMISSION]
        if self.lab.webhooks_on:
            stages = stage_documents(webhook_commands(build=False) / "kwok-stages")
            config.write_text(KWOKCTL_CONFIG + "".join(
                "---\n" + yaml.safe_dump(doc, sort_keys=False) for doc in stages))
            egress = self.egress_config(name)
            egress.parent.mkdir(parents=True, exist_ok=True)
            egress.write_text(egress_configuration(socket_path(self.lab.egress, name)))
            admission = ["--extra-args", AGGREGATOR_ROUTING,
                         "--extra-args", f"{EGRESS_FLAG}{egress}"]
        else:
            config.write_text(KWOKCTL_CONFIG)
        self.run(
            "create", "cluster", "--name", name, "--runtime", "binary",
            "--config", str(config),
            "--kube-apiserver-binary", str(self.bin / "kube-apiserver"),
            "--kube-controller-manager-binary", str(self.bin / "kube-controller-manager"),
            "--kube-scheduler-binary", str(self.bin / "kube-scheduler"),
            "--kwok-controller-binary", str(self.bin / "kwok"),
            "--etcd-binary", str(self.bin / "etcd"),
            "--kubeconfig", str(self.kubeconfig_path(name)),
            *admission,
            "--wait", "3m",
        )
        self.run("scale", "node", "--name", name, "--replicas", str(FAKE_NODES))

    def start(self, name: str) -> None:
        with machine_ports_lock():
            self.run("start", "cluster", "--name", name, "--wait", "3m")

    def delete(self, name: str) -> None:
        self.run("delete", "cluster", "--name", name, check=False)
        self.egress_config(name).unlink(missing_ok=True)

    def dump(self, name: str, out: Path) -> None:
        """Every component's log of cluster `name` into `out/name/`."""
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        for component in COMPONENTS:
            text = self.run("logs", component, "--name", name, check=False)
            (target / f"{component}.log").write_text(text)

    def pids(self, name: str) -> dict[str, int]:
        """The pid of each running component of `name` (from kwokctl's pid files)."""
        pids: dict[str, int] = {}
        pid_dir = self.lab.kwok / "clusters" / name / "pids"
        for component in COMPONENTS:
            path = pid_dir / f"{component}.pid"
            if path.exists():
                try:
                    pids[component] = int(path.read_text().strip())
                except ValueError:
                    continue
        return pids


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
