"""One webhook pod played by a local process: Knative's webhook command of the pod's
component and minor, with the pod's environment, its own ports, and the rights of the
pod's ServiceAccount (a kubeconfig that impersonates it)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from lab.kwok_stages import WEBHOOK_ROLE_LABEL

# The component of a webhook pod, by its `role` label (lab.kwok_stages holds those pods back):
# its image may come from any registry (a `registry` override renames it).
COMPONENTS = {"webhook": "serving", "eventing-webhook": "eventing"}
VERSION_LABEL = "app.kubernetes.io/version"
STOP_GRACE_S = 3.0
PROBE_TIMEOUT_S = 2.0


class NoWebhookCommand(Exception):
    """The pod runs a webhook the lab has no command for (another component or minor)."""


@dataclass(frozen=True)
class PodWebhook:
    """What the lab needs of a webhook pod."""

    cluster: str
    namespace: str
    name: str
    ip: str
    port: int          # the container's https port, which the Service targets
    component: str     # serving | eventing
    minor: str         # 1.23
    service_account: str
    env: tuple[tuple[str, str], ...]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.cluster, self.namespace, self.name)


def _field(pod: dict, path: str) -> str:
    value: object = pod
    for part in path.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return str(value)


def pod_webhook(cluster: str, pod: dict) -> PodWebhook:
    """The webhook of pod `pod` (a plain dict of the API object); NoWebhookCommand when its
    first container is not a Knative webhook command the lab knows."""
    container = pod["spec"]["containers"][0]
    labels = pod["metadata"].get("labels") or {}
    component = COMPONENTS.get(labels.get(WEBHOOK_ROLE_LABEL, ""))
    version = labels.get(VERSION_LABEL, "")
    if component is None or version.count(".") < 1:
        raise NoWebhookCommand(
            f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} (role "
            f"{labels.get(WEBHOOK_ROLE_LABEL)!r}, version label {version!r}): no Knative "
            "webhook command")
    minor = ".".join(version.lstrip("v").split(".")[:2])
    env: list[tuple[str, str]] = []
    for var in container.get("env") or []:
        if "value" in var:
            env.append((var["name"], str(var["value"])))
        elif "fieldRef" in (var.get("valueFrom") or {}):
            env.append((var["name"], _field(pod, var["valueFrom"]["fieldRef"]["fieldPath"])))
    port = next((int(p["containerPort"]) for p in container.get("ports") or []
                 if p.get("name") == "https-webhook"), 8443)
    return PodWebhook(
        cluster=cluster, namespace=pod["metadata"]["namespace"], name=pod["metadata"]["name"],
        ip=pod["status"]["podIP"], port=port, component=component, minor=minor,
        service_account=pod["spec"].get("serviceAccountName") or "default", env=tuple(env))


# What Knative's webhook logs when a port it was given is taken.
BIND_ERROR = b"bind: address already in use"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def impersonating_kubeconfig(admin: Path, namespace: str, account: str, out: Path) -> Path:
    """A copy of the cluster's admin kubeconfig that acts as ServiceAccount
    `namespace/account`: the webhook holds the rights the release gives its pod."""
    config = yaml.safe_load(admin.read_text())
    for user in config.get("users") or []:
        user["user"]["as"] = f"system:serviceaccount:{namespace}:{account}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(config))
    out.chmod(0o600)
    return out


class WebhookProcess:
    """Knative's webhook command running for one pod."""

    def __init__(self, pod: PodWebhook, command: Path, admin_kubeconfig: Path,
                 work: Path, preexec: Callable[[], None] | None = None) -> None:
        self.pod = pod
        self.port = free_port()
        kubeconfig = impersonating_kubeconfig(
            admin_kubeconfig, pod.namespace, pod.service_account,
            work / f"{pod.namespace}-{pod.name}.kubeconfig")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR")}
        env.update(dict(pod.env))
        # Its own ports: every webhook of the machine listens on all addresses.
        env.update(WEBHOOK_PORT=str(self.port), PROFILING_PORT=str(free_port()),
                   METRICS_PROMETHEUS_PORT=str(free_port()), KUBECONFIG=str(kubeconfig))
        self.log = work / f"{pod.namespace}-{pod.name}.log"
        self._log_start = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(command), "--kubeconfig", str(kubeconfig)], env=env, stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=preexec)

    def running(self) -> bool:
        return self.proc.poll() is None

    def lost_its_port(self) -> bool:
        """Whether another process bound one of its ports first (free_port's answer is free
        only until someone binds it): Knative's webhook then logs the error and runs on
        without serving, so it never answers."""
        with self.log.open("rb") as log:
            log.seek(self._log_start)
            return BIND_ERROR in log.read()

    def answers(self) -> bool:
        """Whether the webhook answers its readiness probe as the kubelet sends it (HTTPS
        GET with the kubelet's User-Agent, and the header the release's probe adds)."""
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        req = urllib.request.Request(f"https://127.0.0.1:{self.port}/",
                                     headers={"User-Agent": "kube-probe/1.36",
                                              "K-Kubelet-Probe": "webhook"})
        try:
            with urllib.request.urlopen(req, timeout=PROBE_TIMEOUT_S, context=ctx) as resp:
                return resp.status == 200
        except Exception:  # noqa: BLE001 - not answering, for any reason
            return False

    def stop(self) -> None:
        """SIGTERM, then SIGKILL: the pod is already unrouted, so the webhook's own drain
        (about 45 s of serving on) is not waited for."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait()
