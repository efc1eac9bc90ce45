"""The Knative Operator, run out-of-cluster against one lab cluster: the reference the
parity tests hold knative-fleet against, and the operator a take-over starts from.

`toolchain/build.sh` builds it (`knative.dev/operator`, pinned in toolchain/pins.env) and
copies its release files (`kodata/`, its KO_DATA_PATH) and CRDs beside the bin dir. Run
out of a cluster, it has no conversion webhook, so its CRDs are installed without the
`spec.conversion` stanza (v1beta1 is the only version the parity tests write). Its
probes server listens on :8080 (fixed in knative.dev/pkg sharedmain), so one operator
runs at a time on a machine.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from lab.crds import install_crds
from lab.handle import Cluster
from lab.idempotent import create_if_absent
from lab.removal import delete_namespaces_then_crds
from lab.wait import wait_for

OPERATOR_NAMESPACE = "knative-operator"
GROUP = "operator.knative.dev"
VERSION = "v1beta1"
# kind -> plural; the operator's finalizer on each CR is "<plural>.<group>".
PLURALS = {"KnativeServing": "knativeservings", "KnativeEventing": "knativeeventings"}


def operator_data(bin_path: Path) -> Path:
    """The operator's data dir of a toolchain (`toolchain/build.sh --operator`)."""
    return bin_path.parent / "knative-operator"


def crd_without_conversion(crd: dict) -> dict:
    """The CRD with its conversion webhook stanza removed (no webhook runs out of a cluster;
    the apiserver then serves every version as stored)."""
    spec = {k: v for k, v in crd["spec"].items() if k != "conversion"}
    return {**crd, "spec": spec}


def cr(kind: str, namespace: str, spec: dict, name: str | None = None) -> dict:
    """A KnativeServing / KnativeEventing with `spec`, named after its namespace as the
    operator's docs do."""
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind,
            "metadata": {"name": name or namespace, "namespace": namespace}, "spec": spec}


def ready(obj: dict) -> bool:
    conds = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}
    return conds.get("Ready") == "True"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class KnativeOperator:
    """One operator process against `cluster`, started and stopped by pid."""

    cluster: Cluster
    bin: Path
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def data(self) -> Path:
        return operator_data(self.bin)

    @property
    def kodata(self) -> Path:
        return self.data / "kodata"

    def crds(self) -> list[dict]:
        return [crd_without_conversion(yaml.safe_load(p.read_text()))
                for p in sorted((self.data / "crds").glob("*.yaml"))]

    def install_crds(self, api: client.ApiClient, timeout: float = 60) -> None:
        install_crds(api, self.crds(), timeout)
        create_if_absent(client.CoreV1Api(api).create_namespace,
                         {"metadata": {"name": OPERATOR_NAMESPACE}})

    def start(self) -> None:
        """Starts the operator; fails with its log's tail if it exits within its first
        seconds (a port in use, a missing CRD)."""
        env = dict(os.environ,
                   KUBECONFIG=self.cluster.kubeconfig,
                   SYSTEM_NAMESPACE=OPERATOR_NAMESPACE,
                   KO_DATA_PATH=str(self.kodata),
                   PROFILING_PORT=str(_free_port()),
                   POD_NAME="knative-operator-lab")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([str(self.bin / "knative-operator")], env=env,
                                         stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: self.proc.poll() is not None or self._leading(), 60,
                     what="knative-operator to start")
        finally:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"knative-operator exited with {self.proc.returncode}:\n{tail}")

    def _leading(self) -> bool:
        return "Starting controllers" in self.log.read_text(errors="replace") or \
            "Starting workers" in self.log.read_text(errors="replace")

    def stop(self, timeout: float = 30) -> None:
        """Ends the process this object started (by its pid), nothing else."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)

    def apply(self, api: client.ApiClient, obj: dict) -> dict:
        """Creates the CR, or replaces its spec when it exists."""
        objs = client.CustomObjectsApi(api)
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        plural = PLURALS[obj["kind"]]
        try:
            return objs.create_namespaced_custom_object(GROUP, VERSION, ns, plural, obj)
        except ApiException as exc:
            if exc.status != 409:
                raise
        live = objs.get_namespaced_custom_object(GROUP, VERSION, ns, plural, name)
        live["spec"] = obj["spec"]
        return objs.replace_namespaced_custom_object(GROUP, VERSION, ns, plural, name, live)

    def wait_ready(self, api: client.ApiClient, kind: str, namespace: str, name: str,
                   timeout: float = 600) -> dict:
        """Waits for the CR's Ready condition; a timeout names its conditions."""
        objs = client.CustomObjectsApi(api)
        last: dict = {}

        def check() -> dict | None:
            nonlocal last
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"knative-operator exited with {self.proc.returncode}; "
                                   f"log: {self.log}")
            last = objs.get_namespaced_custom_object(GROUP, VERSION, namespace,
                                                     PLURALS[kind], name)
            return last if ready(last) else None

        try:
            return wait_for(check, timeout, interval=2, what=f"{kind} {namespace}/{name} Ready")
        except TimeoutError as exc:
            conds = (last.get("status") or {}).get("conditions")
            raise TimeoutError(f"{exc}; conditions: {conds}; log: {self.log}") from None


def release_orphaned(api: client.ApiClient, kind: str, namespace: str, name: str,
                     timeout: float = 120) -> None:
    """The take-over's hand-off: the CR's finalizer is removed (so the operator's uninstall
    never runs) and the CR is deleted with propagationPolicy Orphan, so Kubernetes' garbage
    collector removes its ownerReference from every object of the install and deletes none.
    Returns once the CR is gone (the collector has finished orphaning)."""
    objs = client.CustomObjectsApi(api)
    plural = PLURALS[kind]
    objs.patch_namespaced_custom_object(GROUP, VERSION, namespace, plural, name,
                                        {"metadata": {"finalizers": None}})
    objs.delete_namespaced_custom_object(
        GROUP, VERSION, namespace, plural, name,
        body=client.V1DeleteOptions(propagation_policy="Orphan"))

    def gone() -> bool:
        try:
            objs.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
        except ApiException as exc:
            if exc.status == 404:
                return True
            raise
        return False

    wait_for(gone, timeout, what=f"{kind} {namespace}/{name} deleted (orphaning its objects)")


def remove_operator(api: client.ApiClient) -> None:
    """Deletes the operator's system namespace, then its CRDs (the operator's own
    uninstall on a cluster: after the take-over no CR of its kinds is left), and waits
    until both are gone."""
    delete_namespaces_then_crds(api, (OPERATOR_NAMESPACE,),
                                [f"{plural}.{GROUP}" for plural in PLURALS.values()])
