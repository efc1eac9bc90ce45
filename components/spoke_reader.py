"""Reads the few live facts a plan needs from a spoke (which install namespaces
exist, and whether this product created them), with the credential the access
provider just issued. The token lives only in memory."""

from __future__ import annotations

import base64
import os
import tempfile

from kubernetes import client
from kubernetes.client.rest import ApiException

from access import SpokeConnection


def _api(conn: SpokeConnection, token: str, ca_path: str | None) -> client.ApiClient:
    cfg = client.Configuration()
    cfg.host = conn.server
    cfg.api_key = {"authorization": f"Bearer {token}"}
    cfg.verify_ssl = not conn.insecure_skip_tls_verify
    cfg.ssl_ca_cert = ca_path
    if conn.tls_server_name:
        cfg.tls_server_name = conn.tls_server_name
    if conn.proxy_url:
        cfg.proxy = conn.proxy_url
    cfg.retries = 1
    return client.ApiClient(cfg)


def existing_namespaces(
    conn: SpokeConnection, token: str, names: list[str]
) -> dict[str, dict[str, str] | None]:
    """Maps each of `names` that exists on the spoke to its labels."""
    ca_path = None
    try:
        if conn.certificate_authority_data:
            fd, ca_path = tempfile.mkstemp(suffix=".crt")
            with os.fdopen(fd, "wb") as fh:
                fh.write(base64.b64decode(conn.certificate_authority_data))
        core = client.CoreV1Api(_api(conn, token, ca_path))
        found: dict[str, dict[str, str] | None] = {}
        for name in names:
            try:
                ns = core.read_namespace(name, _request_timeout=10)
            except ApiException as exc:
                if exc.status == 404:
                    continue
                raise
            found[name] = dict(ns.metadata.labels or {})
        return found
    finally:
        if ca_path:
            os.unlink(ca_path)
