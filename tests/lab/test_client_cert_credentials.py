"""Client-certificate credentials through a real kube-apiserver: an exec plugin that
returns the spoke's admin client certificate (kwok's kubeconfig holds one), a
ClusterProfile of our own on the hub, and the one resolution path end to end."""

from __future__ import annotations

import base64
import contextlib
import json
import stat
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from access import (
    ProviderFile,
    Reason,
    ResolutionError,
    ResolvedSpoke,
    hub_api_client,
    resolve_spoke,
)
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.register import GROUP, PLURAL, PROFILE_NAMESPACE, VERSION, apply_cluster_profile
from lab.register import profile_status as lab_profile_status
from tests.support.http_server import make_pki

pytestmark = pytest.mark.lab
PROVIDER = "client-cert"
SPOKE = "spoke-1"

# Reads the client certificate and key of the kubeconfig in $CERT_KUBECONFIG (inline
# data or files, as kubectl accepts them) and prints them as an ExecCredential; counts
# its runs in the file $PLUGIN_RUNS names, if any.
PLUGIN = '''
import base64, json, os, pathlib, yaml
if os.environ.get("PLUGIN_RUNS"):
    open(os.environ["PLUGIN_RUNS"], "a").write("run\\n")
path = pathlib.Path(os.environ["CERT_KUBECONFIG"])
cfg = yaml.safe_load(path.read_text())
context = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
user = next(u["user"] for u in cfg["users"] if u["name"] == context["user"])
def pem(field):
    if user.get(field + "-data"):
        return base64.b64decode(user[field + "-data"]).decode()
    return (path.parent / user[field]).read_text()
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"clientCertificateData": pem("client-certificate"),
                             "clientKeyData": pem("client-key")}}))
'''


def cluster_of(kubeconfig: Path) -> tuple[str, str]:
    """The spoke's server and base64 CA, from its admin kubeconfig."""
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    ca = cluster.get("certificate-authority-data") or base64.b64encode(
        (kubeconfig.parent / cluster["certificate-authority"]).read_bytes()).decode()
    return cluster["server"], ca


def write_provider_file(directory: Path, cert_kubeconfig: Path) -> Path:
    """The plugin (run with this venv's python) and a provider file naming it."""
    directory.mkdir(parents=True, exist_ok=True)
    plugin = directory / "client-cert-plugin"
    plugin.write_text(f"#!{sys.executable}\n{PLUGIN}")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    path = directory / "providers.json"
    env = {"CERT_KUBECONFIG": str(cert_kubeconfig), "PLUGIN_RUNS": str(directory / "runs")}
    path.write_text(json.dumps({"providers": [{"name": PROVIDER, "execConfig": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
        "env": [{"name": k, "value": v} for k, v in env.items()]}}]}))
    return path


@dataclass
class CertProfile:
    """A ClusterProfile of our own on the hub for spoke-1, served by the cert plugin."""

    name: str
    provider_file: Path


@contextlib.contextmanager
def client_cert_profile(lab: Lab, directory: Path) -> Iterator[CertProfile]:
    """A new ClusterProfile for spoke-1 whose provider returns the spoke's admin client
    certificate, with its provider file in `directory`; deleted afterwards."""
    kubeconfig = Path(lab.spoke(SPOKE).kubeconfig)
    server, ca = cluster_of(kubeconfig)
    name = f"client-cert-{uuid.uuid4().hex[:6]}"
    status = lab_profile_status(server, ca, name)
    status["accessProviders"][0]["name"] = PROVIDER
    hub = lab.hub.api()
    apply_cluster_profile(hub, name, status)
    try:
        yield CertProfile(name, write_provider_file(directory, kubeconfig))
    finally:
        client.CustomObjectsApi(hub).delete_namespaced_custom_object(
            GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name)


@pytest.fixture
def cert_profile(lab: Lab, tmp_path: Path) -> Iterator[CertProfile]:
    with client_cert_profile(lab, tmp_path / "admin") as profile:
        yield profile


@pytest.fixture
def marked_namespace(lab: Lab) -> Iterator[str]:
    """A namespace on spoke-1 that looks installed by this tool at version 1.2.3."""
    api = lab.spoke(SPOKE).api()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    name = f"cc-{uuid.uuid4().hex[:6]}"
    ours = {"app.kubernetes.io/managed-by": "knative-fleet"}
    core.create_namespace({"metadata": {"name": name, "labels": ours}})
    labels = {"app": "cc"}
    apps.create_namespaced_deployment(name, {
        "metadata": {"name": "cc", "labels": {**ours, "app.kubernetes.io/version": "1.2.3"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "example.invalid/none:1"}]}}},
    })
    try:
        yield name
    finally:
        delete_if_present(core.delete_namespace, name)


def resolve(lab: Lab, profile: CertProfile, namespaces: list[str],
            provider_file: Path | None = None) -> ResolvedSpoke:
    path = provider_file or profile.provider_file
    providers = ProviderFile.model_validate_json(path.read_text())
    return resolve_spoke("cc", PROFILE_NAMESPACE, profile.name,
                         hub=hub_api_client(lab.hub.kubeconfig, None), providers=providers,
                         namespaces=namespaces, plugin_timeout=30)


def test_client_certificate_resolves_and_reads_the_facts(
    lab: Lab, cert_profile: CertProfile, marked_namespace: str, tmp_path: Path
) -> None:
    absent = f"cc-absent-{uuid.uuid4().hex[:6]}"
    resolved = resolve(lab, cert_profile, [marked_namespace, absent])
    assert resolved.credential.kind == "client certificate"
    assert resolved.credential.token is None
    assert resolved.server_version.startswith("v1.")
    # Reading namespaces needs an authenticated identity: anonymous requests get 403.
    assert set(resolved.facts.namespaces) == {marked_namespace}
    assert resolved.facts.namespaces[marked_namespace]["app.kubernetes.io/managed-by"] == (
        "knative-fleet")
    assert resolved.facts.installed == {marked_namespace: "1.2.3"}
    assert (tmp_path / "admin" / "runs").read_text() == "run\n"  # one credential for all
    assert "PRIVATE KEY" not in repr(resolved)


def test_a_client_certificate_the_spoke_does_not_trust_is_refused(
    lab: Lab, cert_profile: CertProfile, tmp_path: Path
) -> None:
    # Same plugin, but a certificate from a CA the spoke does not know.
    pki = make_pki(tmp_path / "pki")
    server, ca = cluster_of(Path(lab.spoke(SPOKE).kubeconfig))
    foreign = tmp_path / "foreign.kubeconfig"
    foreign.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": server,
                                               "certificate-authority-data": ca}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
        "users": [{"name": "x", "user": {"client-certificate": str(pki / "client.crt"),
                                         "client-key": str(pki / "client.key")}}],
    }))
    providers = write_provider_file(tmp_path / "foreign", foreign)
    with pytest.raises(ResolutionError) as caught:
        resolve(lab, cert_profile, ["default"], providers)
    err = caught.value
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED, str(err)
    key_body = (pki / "client.key").read_text().splitlines()[1]
    assert key_body not in str(err)
