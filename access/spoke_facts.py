"""Reads the few live facts a plan needs from a spoke (which install namespaces
exist, whether this product created them, and which Knative version it runs there),
with the credential the access provider just issued. The token lives only in memory."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from kubernetes import client
from kubernetes.client.rest import ApiException

from access import SpokeConnection

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "knative-fleet"
VERSION_LABEL = "app.kubernetes.io/version"


def spoke_api_client(conn: SpokeConnection, token: str) -> client.ApiClient:
    """A client for the spoke with a bearer token the access provider issued."""
    cfg = client.Configuration()
    cfg.host = conn.server
    cfg.api_key = {"authorization": f"Bearer {token}"}
    cfg.verify_ssl = not conn.insecure_skip_tls_verify
    if conn.certificate_authority_data:
        cfg.ca_cert_data = base64.b64decode(conn.certificate_authority_data).decode()
    if conn.tls_server_name:
        cfg.tls_server_name = conn.tls_server_name
    if conn.proxy_url:
        cfg.proxy = conn.proxy_url
    cfg.retries = 1
    return client.ApiClient(cfg)


@dataclass
class SpokeFacts:
    namespaces: dict[str, dict[str, str]]  # existing install namespace -> its labels
    installed: dict[str, str]  # install namespace -> Knative version this product runs there


def installed_version(apps: client.AppsV1Api, namespace: str) -> str | None:
    """The release version of this product's Deployments in `namespace` (the oldest,
    if an upgrade was interrupted half way), or None when it installed nothing there."""
    selector = f"{MANAGED_BY}={MANAGED_BY_VALUE}"
    items = apps.list_namespaced_deployment(namespace, label_selector=selector,
                                            _request_timeout=10).items
    versions = {(d.metadata.labels or {}).get(VERSION_LABEL) for d in items}
    versions.discard(None)
    parsed = [v for v in versions if v and re.fullmatch(r"v?\d+\.\d+\.\d+", v)]
    if not parsed:
        return None
    return min(parsed, key=lambda v: tuple(int(p) for p in v.lstrip("v").split("."))).lstrip("v")


def read_spoke_facts(conn: SpokeConnection, token: str, names: list[str]) -> SpokeFacts:
    """Which of the install namespaces `names` exist, and what runs in them."""
    api = spoke_api_client(conn, token)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    facts = SpokeFacts(namespaces={}, installed={})
    for name in names:
        try:
            ns = core.read_namespace(name, _request_timeout=10)
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        facts.namespaces[name] = dict(ns.metadata.labels or {})
        version = installed_version(apps, name)
        if version:
            facts.installed[name] = version
    return facts
