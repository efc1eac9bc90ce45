"""read_cluster_profile against a tiny fake hub: 404 vs. unavailable, and no long hangs."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from access import ProfileError, Reason, hub_api_client, read_cluster_profile
from tests.support.http_server import serve as serve_handler

BASE = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces"
PROFILE = {
    "apiVersion": "multicluster.x-k8s.io/v1alpha1",
    "kind": "ClusterProfile",
    "metadata": {"name": "spoke-1", "namespace": "fleet-system"},
    "spec": {"clusterManager": {"name": "knative-fleet"}},
}


def status(code: int, message: str, **details: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "code": code,
        "details": details,
    }


ROUTES: dict[str, tuple[int, object]] = {
    f"{BASE}/fleet-system/clusterprofiles/spoke-1": (200, PROFILE),
    f"{BASE}/fleet-system/clusterprofiles/missing": (
        404,
        status(
            404,
            'clusterprofiles.multicluster.x-k8s.io "missing" not found',
            name="missing",
            group="multicluster.x-k8s.io",
            kind="clusterprofiles",
        ),
    ),
    f"{BASE}/locked/clusterprofiles/spoke-1": (
        403,
        status(
            403,
            'clusterprofiles.multicluster.x-k8s.io "spoke-1" is forbidden: User "bob" cannot '
            'get resource "clusterprofiles"',
        ),
    ),
    f"{BASE}/broken/clusterprofiles/spoke-1": (500, status(500, "etcdserver: request timed out")),
}


class Hub(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.headers.get("Authorization") != "Bearer hub-token":
            code, body = 401, status(401, "Unauthorized")
        else:
            code, body = ROUTES.get(self.path, (404, "404 page not found\n"))
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(code)
        self.send_header(
            "Content-Type", "text/plain" if isinstance(body, str) else "application/json"
        )
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def serve() -> contextlib.AbstractContextManager[str]:
    return serve_handler(Hub)


def kubeconfig(tmp_path: Path, server: str, token: str = "hub-token") -> str:
    path = tmp_path / "hub.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "hub", "cluster": {"server": server}}],
                "users": [{"name": "hub", "user": {"token": token}}],
                "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "hub"}}],
                "current-context": "hub",
            }
        )
    )
    return str(path)


def failure(api, namespace: str, name: str, timeout: float = 5) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        read_cluster_profile(api, namespace, name, timeout=timeout)
    assert "hub-token" not in caught.value.message
    return caught.value


def test_reads_profile(tmp_path: Path) -> None:
    with serve() as url:
        api = hub_api_client(kubeconfig(tmp_path, url), "hub")
        assert read_cluster_profile(api, "fleet-system", "spoke-1") == PROFILE


def test_missing_profile_is_not_found(tmp_path: Path) -> None:
    with serve() as url:
        err = failure(hub_api_client(kubeconfig(tmp_path, url), None), "fleet-system", "missing")
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_FOUND
    assert err.message == "ClusterProfile fleet-system/missing not found on the hub"


def test_missing_crd_is_not_found_with_a_hint(tmp_path: Path) -> None:
    with serve() as url:
        err = failure(hub_api_client(kubeconfig(tmp_path, url), None), "other", "spoke-1")
    assert err.reason is Reason.CLUSTER_PROFILE_NOT_FOUND
    assert "is the CRD installed?" in err.message


@pytest.mark.parametrize(
    ("namespace", "token", "fragment"),
    [
        (
            "locked",
            "hub-token",
            "denied access (403) reading ClusterProfile locked/spoke-1: "
            'clusterprofiles.multicluster.x-k8s.io "spoke-1" is forbidden',
        ),
        (
            "broken",
            "hub-token",
            "answered HTTP 500 reading ClusterProfile broken/spoke-1: "
            "etcdserver: request timed out",
        ),
        ("fleet-system", "wrong", "rejected our credentials (401)"),
    ],
)
def test_other_errors_are_unavailable(
    tmp_path: Path, namespace: str, token: str, fragment: str
) -> None:
    with serve() as url:
        api = hub_api_client(kubeconfig(tmp_path, url, token), None)
        err = failure(api, namespace, "spoke-1")
    assert err.reason is Reason.CLUSTER_PROFILE_UNAVAILABLE
    assert fragment in err.message


def test_dead_hub_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    api = hub_api_client(kubeconfig(tmp_path, url), None)
    started = time.monotonic()
    err = failure(api, "fleet-system", "spoke-1")
    assert time.monotonic() - started < 3
    assert err.reason is Reason.CLUSTER_PROFILE_UNAVAILABLE
    assert err.message == (
        f"cannot read ClusterProfile fleet-system/spoke-1: connection refused by the hub at {url}"
    )


def test_silent_hub_times_out_without_read_retries(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        api = hub_api_client(kubeconfig(tmp_path, url), None)
        started = time.monotonic()
        err = failure(api, "fleet-system", "spoke-1", timeout=0.3)
        assert time.monotonic() - started < 1.5
    assert err.reason is Reason.CLUSTER_PROFILE_UNAVAILABLE
    assert "did not answer within 0.3 s" in err.message


def test_bad_kubeconfig_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as caught:
        hub_api_client(str(tmp_path / "nope.yaml"), "hub")
    assert caught.value.reason is Reason.CLUSTER_PROFILE_UNAVAILABLE
    assert "cannot load hub kubeconfig" in caught.value.message
    path = kubeconfig(tmp_path, "http://127.0.0.1:1")
    with pytest.raises(ProfileError, match="context 'nope'"):
        hub_api_client(path, "nope")
