"""probe_spoke against local servers: plain HTTP, real TLS (openssl-made certs), dead ports."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import ssl
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from access import PluginCredential, ProfileError, Reason, SpokeConnection, probe_spoke
from tests.support.http_server import b64, make_pki, server_context
from tests.support.http_server import serve as serve_handler

TOKEN = "good-token"


class Handler(BaseHTTPRequestHandler):
    """A fake kube-apiserver /version: 200 for the good token or a client cert, else 401."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        has_cert = hasattr(self.connection, "getpeercert") and self.connection.getpeercert()
        if self.path == "/prefix/version" or self.path == "/version":
            if self.headers.get("Authorization") == f"Bearer {TOKEN}" or has_cert:
                self.reply(200, {"gitVersion": "v1.35.0", "major": "1"})
            elif self.headers.get("Authorization") == "Bearer forbidden":
                self.reply(403, {"kind": "Status"})
            elif self.headers.get("Authorization") == "Bearer teapot":
                self.reply(418, {})
            elif self.headers.get("Authorization") == "Bearer html":
                self.reply(200, "<html>proxy login</html>")
            else:
                self.reply(401, {"kind": "Status", "code": 401})
        else:
            self.reply(404, {})

    def reply(self, code: int, body: object) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def serve(context: ssl.SSLContext | None = None) -> contextlib.AbstractContextManager[str]:
    return serve_handler(Handler, context)


def conn(server: str, **changes) -> SpokeConnection:
    base = SpokeConnection(
        server=server,
        certificate_authority_data=None,
        proxy_url=None,
        tls_server_name=None,
        insecure_skip_tls_verify=False,
        provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1",
        command="plugin",
        args=(),
        env=(),
        provide_cluster_info=True,
        exec_extension=None,
    )
    return replace(base, **changes)


def bearer(token: str) -> PluginCredential:
    return PluginCredential(token=token)


def failure(connection: SpokeConnection, token: str = TOKEN, timeout: float = 5) -> str:
    with pytest.raises(ProfileError) as caught:
        probe_spoke(connection, bearer(token), timeout=timeout)
    assert caught.value.reason is Reason.REMOTE_CLIENT_CREATION_FAILED
    assert TOKEN not in caught.value.message
    return caught.value.message


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


# --- plain HTTP --------------------------------------------------------------------------------


def test_success_returns_git_version() -> None:
    with serve() as url:
        assert probe_spoke(conn(url), bearer(TOKEN)) == "v1.35.0"
        assert probe_spoke(conn(url + "/prefix/"), bearer(TOKEN)) == "v1.35.0"


@pytest.mark.parametrize(
    ("token", "fragment"),
    [
        ("bad", "token rejected (401)"),
        ("forbidden", "forbidden (403)"),
        ("teapot", "unexpected HTTP 418"),
        ("html", "did not return a Kubernetes version"),
    ],
)
def test_http_failures(token: str, fragment: str) -> None:
    with serve() as url:
        assert fragment in failure(conn(url), token)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused() -> None:
    server = f"https://127.0.0.1:{_free_port()}"
    assert failure(conn(server)) == f"connection refused at {server}"


def test_silent_server_times_out() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)  # accepts the TCP connection, never answers
        server = f"http://127.0.0.1:{sock.getsockname()[1]}"
        message = failure(conn(server), timeout=0.3)
    assert "did not answer within 0.3 s" in message


def test_unresolvable_host() -> None:
    assert "cannot resolve host 'spoke.invalid'" in failure(conn("https://spoke.invalid:6443"))


def test_dead_proxy() -> None:
    proxy = f"http://127.0.0.1:{_free_port()}"
    message = failure(conn("https://10.255.255.1:6443", proxy_url=proxy))
    assert message.startswith(f"proxy {proxy} failed")


def test_environment_proxy_is_used_like_client_go(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("https_proxy", proxy)
    monkeypatch.setenv("no_proxy", "")
    assert failure(conn("https://spoke.example:6443")).startswith(f"proxy {proxy} failed")


# --- TLS ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def tls_url(pki: Path) -> Iterator[str]:
    with serve(server_context(pki)) as url:
        yield url


def test_tls_with_ca_and_server_name(tls_url: str, pki: Path) -> None:
    good = conn(
        tls_url, certificate_authority_data=b64(pki / "ca.crt"), tls_server_name="spoke.internal"
    )
    assert probe_spoke(good, bearer(TOKEN)) == "v1.35.0"


def test_tls_unknown_authority(tls_url: str, pki: Path) -> None:
    other = conn(
        tls_url,
        certificate_authority_data=b64(pki / "other-ca.crt"),
        tls_server_name="spoke.internal",
    )
    assert failure(other) == "TLS verification failed: certificate signed by unknown authority"


def test_tls_system_roots_do_not_know_a_private_ca(tls_url: str) -> None:
    assert "unknown authority" in failure(conn(tls_url, tls_server_name="spoke.internal"))


def test_tls_name_mismatch_without_tls_server_name(tls_url: str, pki: Path) -> None:
    message = failure(conn(tls_url, certificate_authority_data=b64(pki / "ca.crt")))
    assert message == "TLS verification failed: the certificate is not valid for '127.0.0.1'"


def test_insecure_skip_tls_verify(tls_url: str) -> None:
    assert probe_spoke(conn(tls_url, insecure_skip_tls_verify=True), bearer(TOKEN)) == "v1.35.0"


def test_ca_that_is_not_pem(tls_url: str) -> None:
    bad = conn(tls_url, certificate_authority_data=base64.b64encode(b"hello").decode())
    assert "does not hold a PEM CA certificate" in failure(bad)


def test_client_certificate_credential(tls_url: str, pki: Path) -> None:
    cred = PluginCredential(
        client_certificate_data=(pki / "client.crt").read_text(),
        client_key_data=(pki / "client.key").read_text(),
    )
    good = conn(
        tls_url, certificate_authority_data=b64(pki / "ca.crt"), tls_server_name="spoke.internal"
    )
    assert probe_spoke(good, cred) == "v1.35.0"
    assert "token rejected (401)" in failure(good, "bad")
