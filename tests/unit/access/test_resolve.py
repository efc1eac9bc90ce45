"""resolve_spoke end to end: fake hub + fake spoke (one local HTTP server) + fake plugin."""

from __future__ import annotations

import contextlib
import json
import stat
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

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
from tests.support.http_server import serve as serve_handler

V1 = "client.authentication.k8s.io/v1"
PROFILES = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet-system/clusterprofiles/"


def profile(name: str, server: str, healthy: str = "True") -> dict:
    return {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": "fleet-system"},
        "spec": {"clusterManager": {"name": "knative-fleet"}},
        "status": {
            "conditions": [
                {
                    "type": "ControlPlaneHealthy",
                    "status": healthy,
                    "reason": "Manual",
                    "message": "",
                    "lastTransitionTime": "2026-04-22T00:00:00Z",
                }
            ],
            "accessProviders": [
                {
                    "name": "secretreader",
                    "cluster": {
                        "server": server,
                        "extensions": [
                            {
                                "name": "client.authentication.k8s.io/exec",
                                "extension": {"clusterName": name},
                            }
                        ],
                    },
                }
            ],
        },
    }


class HubAndSpoke(BaseHTTPRequestHandler):
    """Hub routes under /apis (token hub-token), spoke /version (token spoke-token)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        base = f"http://{self.headers['Host']}"
        auth = self.headers.get("Authorization")
        if self.path.startswith(PROFILES) and auth == "Bearer hub-token":
            name = self.path.removeprefix(PROFILES)
            found = {
                "spoke-1": profile("spoke-1", base),
                "sick": profile("sick", base, healthy="False"),
            }.get(name)
            code, body = (
                (200, found)
                if found
                else (
                    404,
                    {
                        "kind": "Status",
                        "code": 404,
                        "details": {"name": name, "kind": "clusterprofiles"},
                    },
                )
            )
        elif self.path == "/version":
            code, body = (
                (200, {"gitVersion": "v1.35.1"})
                if auth == "Bearer spoke-token"
                else (401, {"kind": "Status", "code": 401})
            )
        else:
            code, body = 401, {"kind": "Status", "code": 401}
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def serve() -> contextlib.AbstractContextManager[str]:
    return serve_handler(HubAndSpoke)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator:
    with serve() as url:
        path = tmp_path / "hub.yaml"
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "hub", "cluster": {"server": url}}],
                    "users": [{"name": "hub", "user": {"token": "hub-token"}}],
                    "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "hub"}}],
                    "current-context": "hub",
                }
            )
        )
        yield hub_api_client(str(path), None)


def providers(tmp_path: Path, body: str) -> ProviderFile:
    plugin = tmp_path / "plugin"
    plugin.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    return ProviderFile.model_validate(
        {
            "providers": [
                {
                    "name": "secretreader",
                    "execConfig": {
                        "apiVersion": V1,
                        "command": str(plugin),
                        "provideClusterInfo": True,
                    },
                }
            ]
        }
    )


# The plugin answers only for the cluster the exec extension names, like secretreader.
GOOD = """
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
if info["spec"]["cluster"]["config"]["clusterName"] != "spoke-1":
    sys.exit("wrong cluster")
print(json.dumps({"apiVersion": "V1", "kind": "ExecCredential",
                  "status": {"token": os.environ.get("TOKEN", "spoke-token")}}))
""".replace("V1", V1)


def resolution_error(**kwargs) -> ResolutionError:
    kwargs.setdefault("name", "spoke-1")
    with pytest.raises(ResolutionError) as caught:
        resolve_spoke("eu-1", "fleet-system", kwargs.pop("name"), **kwargs)
    err = caught.value
    assert str(err).startswith(f"spoke 'eu-1': {err.reason}: ")
    assert str(err).endswith(f". Fix: {REMEDIATION[err.reason]}")
    assert "spoke-token" not in str(err) and "hub-token" not in str(err)
    return err


def test_resolves_a_healthy_spoke(hub, tmp_path: Path) -> None:
    resolved = resolve_spoke(
        "eu-1", "fleet-system", "spoke-1", hub=hub, providers=providers(tmp_path, GOOD)
    )
    assert resolved.spoke == "eu-1"
    assert resolved.profile_ref == ("fleet-system", "spoke-1")
    assert resolved.server_version == "v1.35.1"
    assert resolved.connection.exec_extension == {"clusterName": "spoke-1"}


def test_without_probe_no_plugin_runs(hub, tmp_path: Path) -> None:
    resolved = resolve_spoke(
        "eu-1",
        "fleet-system",
        "spoke-1",
        hub=hub,
        probe=False,
        providers=providers(tmp_path, "sys.exit('must not run')"),
    )
    assert resolved.server_version == ""


def test_no_provider_file_is_multicluster_disabled_before_the_hub() -> None:
    err = resolution_error(hub=None, providers=None, hub_error=RuntimeError("boom"))
    assert err.reason is Reason.MULTICLUSTER_DISABLED
    assert "ClusterProfile fleet-system/spoke-1" in err.message


def test_hub_errors_are_unavailable(tmp_path: Path) -> None:
    pf = providers(tmp_path, GOOD)
    err = resolution_error(hub=None, providers=pf, hub_error=OSError("no route"))
    assert (err.reason, err.message) == (
        Reason.CLUSTER_PROFILE_UNAVAILABLE,
        "no hub client: no route",
    )
    own = ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "cannot load hub kubeconfig x")
    assert resolution_error(hub=None, providers=pf, hub_error=own).message == own.message
    assert resolution_error(hub=None, providers=pf).reason is Reason.CLUSTER_PROFILE_UNAVAILABLE


def test_not_found(hub, tmp_path: Path) -> None:
    err = resolution_error(name="gone", hub=hub, providers=providers(tmp_path, GOOD))
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_FOUND


def test_not_ready(hub, tmp_path: Path) -> None:
    err = resolution_error(name="sick", hub=hub, providers=providers(tmp_path, GOOD))
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_READY


def test_no_matching_provider(hub) -> None:
    pf = ProviderFile.model_validate({"providers": [{"name": "oidc"}]})
    assert resolution_error(hub=hub, providers=pf).reason is Reason.ACCESS_PROVIDER_FAILED


def test_plugin_failure_shows_its_stderr(hub, tmp_path: Path) -> None:
    body = "sys.stderr.write('failed to get secret fleet-system/spoke-1: not found'); sys.exit(1)"
    err = resolution_error(hub=hub, providers=providers(tmp_path, body))
    assert err.reason is Reason.ACCESS_PROVIDER_FAILED
    assert "failed to get secret fleet-system/spoke-1: not found" in str(err)


def test_rejected_token_is_remote_client_failure(hub, tmp_path: Path) -> None:
    err = resolution_error(
        hub=hub, providers=providers(tmp_path, GOOD), extra_env={"TOKEN": "expired"}
    )
    assert err.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
    assert "token rejected (401)" in err.message
