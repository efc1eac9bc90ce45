"""get_json against a real HTTP server: the body as a dict, the query and the bearer
token sent, an error status raised as the typed APIs raise it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from access.json_reads import get_json

SEEN: list[tuple[str, str | None]] = []


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        SEEN.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/api/v1/namespaces/missing"):
            status, body = 404, {"kind": "Status", "reason": "NotFound", "code": 404}
        else:
            status, body = 200, {"metadata": {"name": "knative-serving",
                                              "labels": {"a": "b"}}, "items": []}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def api() -> Iterator[client.ApiClient]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{server.server_address[1]}"
    cfg.api_key = {"authorization": "Bearer t0ken"}
    SEEN.clear()
    try:
        with client.ApiClient(cfg) as api_client:
            yield api_client
    finally:
        server.shutdown()
        server.server_close()


def test_the_body_comes_back_as_plain_dicts_with_query_and_token_sent(
        api: client.ApiClient) -> None:
    got = get_json(api, "/apis/apps/v1/namespaces/knative-serving/deployments",
                   {"labelSelector": "app.kubernetes.io/managed-by=knative-fleet"})
    assert got["metadata"]["labels"] == {"a": "b"}
    ((path, auth),) = SEEN
    url = urlsplit(path)
    assert url.path == "/apis/apps/v1/namespaces/knative-serving/deployments"
    assert parse_qs(url.query) == {"labelSelector": ["app.kubernetes.io/managed-by=knative-fleet"]}
    assert auth == "Bearer t0ken"


def test_an_error_status_raises_api_exception_with_that_status(
        api: client.ApiClient) -> None:
    with pytest.raises(ApiException) as err:
        get_json(api, "/api/v1/namespaces/missing")
    assert err.value.status == 404
    assert "NotFound" in err.value.body
