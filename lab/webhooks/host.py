"""The webhook host of one lab: for every cluster of the lab, the egress proxy, and a
webhook process for every Knative webhook pod kwok started, marked Ready once it answers.

`python -m lab --dir DIR webhooks` runs it in the foreground; `python -m lab up` starts it
in the background (its pid in DIR/webhooks/host.pid) and `down` stops it. It finds the
lab's clusters by their egress configurations (DIR/egress/<cluster>.yaml, written when a
cluster is created), so a spoke a test adds later is served too."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import datetime
import os
import signal
import sys
import threading
import time
from pathlib import Path

from kubernetes import client, config

from lab.kwok_stages import WEBHOOK_ROLE_LABEL, WEBHOOK_ROLES
from lab.webhooks import egress
from lab.webhooks.process import NoWebhookCommand, PodWebhook, WebhookProcess, pod_webhook

SELECTOR = f"{WEBHOOK_ROLE_LABEL} in ({','.join(WEBHOOK_ROLES)})"
# How often each cluster's webhook pods are listed: a new pod is served within about this.
INTERVAL_S = 1.0
REQUEST_TIMEOUT_S = 5
RESTART_AFTER_S = 2.0


def log(message: str) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S.%f")[:-3]
    print(f"{stamp} {message}", flush=True)


def _die_with_parent() -> None:
    """A webhook process ends with the host, however the host ends (PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


class Cluster:
    """One cluster's webhook pods and their processes."""

    def __init__(self, host: Host, name: str) -> None:
        self.host = host
        self.name = name
        self.kubeconfig = host.root / f"{name}.kubeconfig"
        self.work = host.root / "webhooks" / name
        self.work.mkdir(parents=True, exist_ok=True)
        self.procs: dict[tuple[str, str, str], WebhookProcess] = {}
        self.ready: set[tuple[str, str, str]] = set()
        self.exited: dict[tuple[str, str, str], float] = {}
        self.missing: set[str] = set()
        self._api: client.CoreV1Api | None = None

    def api(self) -> client.CoreV1Api:
        if self._api is None:
            self._api = client.CoreV1Api(
                config.new_client_from_config(config_file=str(self.kubeconfig)))
        return self._api

    def reconcile(self) -> None:
        try:
            pods = self.api().list_pod_for_all_namespaces(
                label_selector=SELECTOR, _request_timeout=REQUEST_TIMEOUT_S).items
        except Exception:  # noqa: BLE001 - a stopped or restarting apiserver: try again
            self._api = None
            return
        seen: set[tuple[str, str, str]] = set()
        for pod in pods:
            raw = client.ApiClient().sanitize_for_serialization(pod)
            if (raw["metadata"].get("deletionTimestamp") or not raw.get("status", {}).get("podIP")
                    or raw["status"].get("phase") != "Running"):
                continue
            try:
                webhook = pod_webhook(self.name, raw)
            except NoWebhookCommand as exc:
                if raw["metadata"]["uid"] not in self.missing:
                    self.missing.add(raw["metadata"]["uid"])
                    log(f"{self.name}: {exc}")
                continue
            seen.add(webhook.key)
            self._serve(webhook, raw)
        for key in [k for k in self.procs if k not in seen]:
            self._stop(key, "its pod is gone or terminating")

    def _serve(self, webhook: PodWebhook, raw: dict) -> None:
        key = webhook.key
        proc = self.procs.get(key)
        if proc is not None and not proc.running():
            log(f"{self.name}: webhook {key[1]}/{key[2]} exited ({proc.proc.returncode}); "
                f"see {proc.log}")
            self._stop(key, "it exited")
            self.exited[key] = time.monotonic()
            proc = None
        if proc is None:
            if time.monotonic() - self.exited.get(key, 0.0) < RESTART_AFTER_S:
                return
            command = self.host.commands / f"{webhook.component}-{webhook.minor}" / "webhook"
            if not command.exists():
                if raw["metadata"]["uid"] not in self.missing:
                    self.missing.add(raw["metadata"]["uid"])
                    log(f"{self.name}: no {webhook.component} {webhook.minor} webhook command "
                        f"at {command} for pod {key[1]}/{key[2]}: "
                        "run toolchain/webhooks.sh --tests")
                return
            proc = self.procs[key] = WebhookProcess(
                webhook, command, self.kubeconfig, self.work, preexec=_die_with_parent)
            log(f"{self.name}: started {webhook.component} {webhook.minor} webhook for "
                f"{key[1]}/{key[2]} ({webhook.ip}:{webhook.port} -> 127.0.0.1:{proc.port}, "
                f"pid {proc.proc.pid})")
        if key in self.ready:
            return
        if not proc.answers():
            if proc.lost_its_port():
                self._stop(key, f"a port it was given was taken; started again (see {proc.log})")
            return
        self.host.routes[(self.name, webhook.ip, webhook.port)] = ("127.0.0.1", proc.port)
        try:
            self._mark_ready(raw)
        except Exception as exc:  # noqa: BLE001 - retried on the next pass
            log(f"{self.name}: cannot mark {key[1]}/{key[2]} Ready: {exc}")
            return
        self.ready.add(key)
        log(f"{self.name}: webhook {key[1]}/{key[2]} answers; pod marked Ready")

    def _mark_ready(self, raw: dict) -> None:
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        statuses = []
        for status in raw["status"].get("containerStatuses") or []:
            status = dict(status, ready=True, started=True)
            statuses.append(status)
        body = {"status": {
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": now}
                           for t in ("Ready", "ContainersReady")],
            "containerStatuses": statuses}}
        self.api().patch_namespaced_pod_status(
            raw["metadata"]["name"], raw["metadata"]["namespace"], body,
            _request_timeout=REQUEST_TIMEOUT_S)

    def _stop(self, key: tuple[str, str, str], why: str) -> None:
        proc = self.procs.pop(key, None)
        self.ready.discard(key)
        if proc is None:
            return
        self.host.routes.pop((self.name, proc.pod.ip, proc.pod.port), None)
        proc.stop()
        log(f"{self.name}: stopped webhook {key[1]}/{key[2]} ({why})")

    def stop_all(self) -> None:
        for key in list(self.procs):
            self._stop(key, "the host stops")


class Host:
    def __init__(self, root: Path, commands: Path) -> None:
        self.root = root
        self.commands = commands
        self.egress = root / "egress"
        self.routes: dict[tuple[str, str, int], tuple[str, int]] = {}
        self.clusters: dict[str, Cluster] = {}
        self.servers: dict[str, asyncio.AbstractServer] = {}
        self.stopping = threading.Event()

    def cluster_names(self) -> list[str]:
        return sorted(p.stem for p in self.egress.glob("*.yaml"))

    def route(self, cluster: str):
        return lambda host, port: self.routes.get((cluster, host, port))

    def reconcile_forever(self) -> None:
        while not self.stopping.is_set():
            names = set(self.cluster_names())
            for name in names - set(self.clusters):
                self.clusters[name] = Cluster(self, name)
            for name in set(self.clusters) - names:
                self.clusters.pop(name).stop_all()
            for cluster in list(self.clusters.values()):
                cluster.reconcile()
            self.stopping.wait(INTERVAL_S)
        for cluster in self.clusters.values():
            cluster.stop_all()

    async def serve_forever(self) -> None:
        while not self.stopping.is_set():
            names = set(self.cluster_names())
            for name in names - set(self.servers):
                sock = egress.socket_path(self.egress, name)
                self.servers[name] = await egress.serve(sock, self.route(name))
                log(f"{name}: egress proxy on {sock}")
            for name in set(self.servers) - names:
                self.servers.pop(name).close()
            await asyncio.sleep(INTERVAL_S)
        for server in self.servers.values():
            server.close()


def run(root: Path, commands: Path) -> int:
    host = Host(root, commands)
    (root / "webhooks").mkdir(parents=True, exist_ok=True)

    def stop(*_: object) -> None:
        host.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    worker = threading.Thread(target=host.reconcile_forever, name="reconcile")
    worker.start()
    log(f"webhook host for {root} (pid {os.getpid()}), commands in {commands}")
    try:
        asyncio.run(host.serve_forever())
    finally:
        host.stopping.set()
        worker.join()
        log("webhook host stopped")
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), Path(sys.argv[2])))
