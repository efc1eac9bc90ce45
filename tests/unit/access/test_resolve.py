"""resolve_spoke, the one resolution path, end to end: a fake hub and spoke (local HTTP
and HTTPS servers), real exec plugins (small scripts), real TLS with client certificates."""

from __future__ import annotations

import contextlib
import json
import logging
import ssl
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from access import (
    REMEDIATION,
    ProfileError,
    ProviderFile,
    Reason,
    ResolutionError,
    hub_api_client,
    resolve_spoke,
)
from access import resolve as resolve_mod
from tests.support.http_server import b64, make_pki, serve, server_context

V1 = "client.authentication.k8s.io/v1"
PROFILES = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet-system/clusterprofiles/"
NAMESPACES = ("knative-serving", "knative-eventing")
SERVING_LABELS = {"app.kubernetes.io/managed-by": "knative-fleet"}
SELECTOR = "app.kubernetes.io/managed-by=knative-fleet"


def profile(name: str, cluster: Mapping, healthy: str = "True") -> dict:
    return {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": "fleet-system"},
        "spec": {"clusterManager": {"name": "knative-fleet"}},
        "status": {
            "conditions": [{"type": "ControlPlaneHealthy", "status": healthy, "reason": "Manual",
                            "message": "", "lastTransitionTime": "2026-04-22T00:00:00Z"}],
            "accessProviders": [{"name": "secretreader", "cluster": {
                **cluster,
                "extensions": [{"name": "client.authentication.k8s.io/exec",
                                "extension": {"clusterName": name}}],
            }}],
        },
    }


def status(code: int) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}


def deployment(name: str, version: str) -> dict:
    labels = {"app": name}
    return {"metadata": {"name": name, "labels": {"app.kubernetes.io/version": version}},
            "spec": {"selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": name, "image": "example/" + name}]}}}}


def spoke_route(path: str) -> tuple[int, object]:
    """The few spoke reads resolution makes: /version, namespaces, our Deployments."""
    parts = urlsplit(path)
    if parts.path == "/version":
        return 200, {"gitVersion": "v1.35.1"}
    if parts.path == "/api/v1/namespaces/knative-serving":
        return 200, {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": "knative-serving", "labels": SERVING_LABELS}}
    if parts.path == "/apis/apps/v1/namespaces/knative-serving/deployments":
        if parse_qs(parts.query).get("labelSelector") != [SELECTOR]:
            return 400, status(400)
        return 200, {"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {},
                     "items": [deployment("activator", "1.21.0"),
                               deployment("controller", "1.20.2")]}
    if parts.path == "/api/v1/namespaces/forbidden":
        return 403, status(403)
    if parts.path == "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews":
        return 201, {"kind": "SelfSubjectRulesReview", "status": {
            "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""],
                               "resources": ["namespaces"]}], "incomplete": False}}
    return 404, status(404)


def handler(cluster: Mapping | None = None) -> type[BaseHTTPRequestHandler]:
    """Hub and spoke in one server: ClusterProfiles for Bearer hub-token; the spoke for
    Bearer spoke-token or a client certificate. Profiles point at `cluster`, or here."""

    class HubAndSpoke(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.do_GET()

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            auth = self.headers.get("Authorization")
            has_cert = hasattr(self.connection, "getpeercert") and self.connection.getpeercert()
            if self.path.startswith(PROFILES) and auth == "Bearer hub-token":
                name = self.path.removeprefix(PROFILES)
                here = cluster or {"server": f"http://{self.headers['Host']}"}
                found = {"spoke-1": profile("spoke-1", here),
                         "sick": profile("sick", here, healthy="False")}.get(name)
                code, body = (200, found) if found else (404, {
                    **status(404), "details": {"name": name, "kind": "clusterprofiles"}})
            elif not self.path.startswith(PROFILES) and (
                    auth == "Bearer spoke-token" or has_cert):
                code, body = spoke_route(self.path)
            else:
                code, body = 401, status(401)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return HubAndSpoke


def hub_client(tmp_path: Path, url: str):
    path = tmp_path / "hub.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "hub",
        "clusters": [{"name": "hub", "cluster": {"server": url}}],
        "users": [{"name": "hub", "user": {"token": "hub-token"}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "hub"}}],
    }))
    return hub_api_client(str(path), None)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator:
    """A hub whose profiles point at a plain-HTTP spoke on the same server."""
    with serve(handler()) as url:
        yield hub_client(tmp_path, url)


def providers(tmp_path: Path, body: str, env: Mapping[str, str] | None = None) -> ProviderFile:
    """A provider file whose plugin runs `body` and counts its runs in tmp_path/runs."""
    plugin = tmp_path / "plugin"
    plugin.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      f"open({str(tmp_path / 'runs')!r}, 'a').write('run\\n')\n{body}\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    return ProviderFile.model_validate({"providers": [{
        "name": "secretreader",
        "execConfig": {"apiVersion": V1, "command": str(plugin), "provideClusterInfo": True,
                       "env": [{"name": k, "value": v} for k, v in (env or {}).items()]},
    }]})


def runs(tmp_path: Path) -> int:
    path = tmp_path / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


# The plugin answers only for the cluster the exec extension names, like secretreader.
GOOD = """
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
if info["spec"]["cluster"]["config"]["clusterName"] != "spoke-1":
    sys.exit("wrong cluster")
print(json.dumps({"apiVersion": "V1", "kind": "ExecCredential",
                  "status": {"token": os.environ.get("TOKEN", "spoke-token")}}))
""".replace("V1", V1)

# Prints the client certificate and key in the files its env names (PEM, as client-go wants).
CLIENT_CERT = """
status = {"clientCertificateData": open(os.environ["CERT"]).read(),
          "clientKeyData": open(os.environ["KEY"]).read()}
print(json.dumps({"apiVersion": "V1", "kind": "ExecCredential", "status": status}))
""".replace("V1", V1)


def resolve(name: str = "spoke-1", **kwargs):
    kwargs.setdefault("namespaces", NAMESPACES)
    kwargs.setdefault("plugin_timeout", 10)
    return resolve_spoke("eu-1", "fleet-system", name, **kwargs)


def resolution_error(*secrets: str, **kwargs) -> ResolutionError:
    with pytest.raises(ResolutionError) as caught:
        resolve(**kwargs)
    err = caught.value
    assert err.spoke == "eu-1"
    assert str(err).startswith(f"spoke 'eu-1': {err.reason}: ")
    assert str(err).endswith(f". Fix: {REMEDIATION[err.reason]}")
    for secret in ("spoke-token", "hub-token", *secrets):
        assert secret not in str(err)
    return err


# --- the happy path ---------------------------------------------------------------------------


def test_resolves_a_healthy_spoke_and_reads_its_facts(hub, tmp_path: Path) -> None:
    resolved = resolve(hub=hub, providers=providers(tmp_path, GOOD))
    assert resolved.server_version == "v1.35.1"
    assert resolved.connection.exec_extension == {"clusterName": "spoke-1"}
    assert resolved.credential.token == "spoke-token"
    assert resolved.facts.namespaces == {"knative-serving": SERVING_LABELS}
    assert resolved.facts.installed == {"knative-serving": "1.20.2"}  # the oldest
    # One review per install namespace; a cluster-wide grant shows in each.
    assert resolved.facts.rules == [{"verbs": ["get", "list"], "apiGroups": [""],
                                     "resources": ["namespaces"]}] * 2
    assert runs(tmp_path) == 1  # one credential serves the probe and the reads
    assert "spoke-token" not in repr(resolved)


def test_only_the_namespaces_asked_for_are_read(hub, tmp_path: Path) -> None:
    resolved = resolve(hub=hub, providers=providers(tmp_path, GOOD),
                       namespaces=["knative-eventing"])
    assert (resolved.facts.namespaces, resolved.facts.installed) == ({}, {})


# --- before the hub: configuration ------------------------------------------------------------


def test_no_provider_file_is_multicluster_disabled_before_the_hub() -> None:
    err = resolution_error(hub=None, providers=None, hub_error=RuntimeError("boom"))
    assert (err.reason, err.message) == (
        Reason.MULTICLUSTER_DISABLED,
        "no access-provider file is configured (knative-fleet:providerFile)",
    )


def test_hub_errors_are_unavailable(tmp_path: Path) -> None:
    pf = providers(tmp_path, GOOD)
    prefix = "cannot reach the hub to read ClusterProfile fleet-system/spoke-1: "
    err = resolution_error(hub=None, providers=pf, hub_error=OSError("no route"))
    assert (err.reason, err.message) == (Reason.CLUSTER_PROFILE_UNAVAILABLE, prefix + "no route")
    own = ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "cannot load hub kubeconfig x")
    assert resolution_error(hub=None, providers=pf, hub_error=own).message == (
        prefix + "cannot load hub kubeconfig x")
    err = resolution_error(hub=None, providers=pf)
    assert err.message == prefix + "no hub client is configured"
    assert runs(tmp_path) == 0


# --- the profile ------------------------------------------------------------------------------


def test_not_found(hub, tmp_path: Path) -> None:
    err = resolution_error(name="gone", hub=hub, providers=providers(tmp_path, GOOD))
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_FOUND


def test_not_ready(hub, tmp_path: Path) -> None:
    err = resolution_error(name="sick", hub=hub, providers=providers(tmp_path, GOOD))
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_READY
    assert runs(tmp_path) == 0


def test_no_matching_provider(hub) -> None:
    pf = ProviderFile.model_validate({"providers": [{"name": "oidc"}]})
    assert resolution_error(hub=hub, providers=pf).reason is Reason.ACCESS_PROVIDER_FAILED


# --- the plugin and the spoke -----------------------------------------------------------------


def test_plugin_failure_shows_its_stderr(hub, tmp_path: Path) -> None:
    body = "sys.stderr.write('failed to get secret fleet-system/spoke-1: not found'); sys.exit(1)"
    err = resolution_error(hub=hub, providers=providers(tmp_path, body))
    assert err.reason is Reason.ACCESS_PROVIDER_FAILED
    assert "failed to get secret fleet-system/spoke-1: not found" in str(err)


def test_rejected_token_is_remote_client_failure(hub, tmp_path: Path) -> None:
    # The provider file's env is how a user passes settings to the plugin.
    pf = providers(tmp_path, GOOD, env={"TOKEN": "expired-token"})
    err = resolution_error("expired-token", hub=hub, providers=pf)
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
    assert "token rejected (401)" in err.message


def test_a_failed_read_of_the_facts_is_remote_client_failure(hub, tmp_path: Path) -> None:
    err = resolution_error(hub=hub, providers=providers(tmp_path, GOOD), namespaces=["forbidden"])
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
    assert "Exception: (403)" in err.message


def test_any_other_failure_is_named_and_redacted(hub, tmp_path: Path, monkeypatch) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("client said spoke-token")

    monkeypatch.setattr(resolve_mod, "read_spoke_facts", broken)
    err = resolution_error(hub=hub, providers=providers(tmp_path, GOOD))
    assert (err.reason, err.message) == (
        Reason.REMOTE_CLIENT_CREATION_FAILED, "RuntimeError: client said <redacted>")


# --- client certificates ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"))


@contextlib.contextmanager
def cert_only_spoke(tmp_path: Path, pki: Path) -> Iterator:
    """An HTTPS spoke that refuses any connection without a client certificate from `ca`,
    and a hub whose profile points at it with its CA and TLS server name."""
    with serve(handler(), server_context(pki, ssl.CERT_REQUIRED)) as spoke_url:
        cluster = {"server": spoke_url, "certificate-authority-data": b64(pki / "ca.crt"),
                   "tls-server-name": "spoke.internal"}
        with serve(handler(cluster)) as hub_url:
            yield hub_client(tmp_path, hub_url)


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the certificate files go while a client is open."""
    path = tmp_path / "private-tmp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


def test_client_certificate_credential_end_to_end(
    tmp_path: Path, pki: Path, private_tmp: Path, caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    pf = providers(tmp_path, CLIENT_CERT,
                   env={"CERT": str(pki / "client.crt"), "KEY": str(pki / "client.key")})
    with cert_only_spoke(tmp_path, pki) as hub:
        resolved = resolve(hub=hub, providers=pf)
    assert resolved.server_version == "v1.35.1"
    assert resolved.facts.namespaces == {"knative-serving": SERVING_LABELS}
    assert resolved.facts.installed == {"knative-serving": "1.20.2"}
    assert resolved.credential.kind == "client certificate"
    assert resolved.credential.token is None
    assert runs(tmp_path) == 1
    assert list(private_tmp.iterdir()) == []  # the files lived only while a client was open
    key = (pki / "client.key").read_text()
    body = key.splitlines()[1]
    out, err = capfd.readouterr()
    for text in (repr(resolved), caplog.text, out, err):
        assert body not in text


def test_client_certificate_the_spoke_does_not_trust(
    tmp_path: Path, pki: Path, private_tmp: Path
) -> None:
    # other-ca's own certificate: valid PEM, but not issued by the CA the spoke trusts.
    pf = providers(tmp_path, CLIENT_CERT,
                   env={"CERT": str(pki / "other-ca.crt"), "KEY": str(pki / "other-ca.key")})
    with cert_only_spoke(tmp_path, pki) as hub:
        body = (pki / "other-ca.key").read_text().splitlines()[1]
        err = resolution_error(body, hub=hub, providers=pf)
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
    # TLS 1.3: whether the server's alert or its close reaches us first is a race.
    assert err.message.startswith(("TLS handshake with", "https://"))
    assert list(private_tmp.iterdir()) == []


def test_a_token_alone_does_not_pass_a_cert_only_spoke(tmp_path: Path, pki: Path) -> None:
    with cert_only_spoke(tmp_path, pki) as hub:
        err = resolution_error(hub=hub, providers=providers(tmp_path, GOOD))
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
