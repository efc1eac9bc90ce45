"""Reads the few live facts a plan needs from a spoke (which install namespaces
exist, whether this product created them, and which Knative version it runs there),
with the credential the access provider just issued. A token lives only in memory; a
client certificate and key only in a private temp dir while the client is open."""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kubernetes import client
from kubernetes.client.rest import ApiException

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE, VERSION_LABEL

from .connection import SpokeConnection
from .credential import PluginCredential, client_cert_files
from .json_reads import create_json, get_json


@contextlib.contextmanager
def spoke_api_client(
    conn: SpokeConnection, credential: PluginCredential
) -> Iterator[client.ApiClient]:
    """A client for the spoke with the plugin's token and/or client certificate, open
    for the block. The kubernetes client reads a certificate only from files, on every
    new connection, so they exist exactly as long as the block."""
    with client_cert_files(credential) as cert_files:
        cfg = client.Configuration()
        cfg.host = conn.server
        if credential.token:
            cfg.api_key = {"authorization": f"Bearer {credential.token}"}
        if cert_files:
            cfg.cert_file, cfg.key_file = cert_files
        cfg.verify_ssl = not conn.insecure_skip_tls_verify
        if conn.certificate_authority_data:
            cfg.ca_cert_data = base64.b64decode(conn.certificate_authority_data).decode()
        if conn.tls_server_name:
            cfg.tls_server_name = conn.tls_server_name
        if conn.proxy_url:
            cfg.proxy = conn.proxy_url
        cfg.retries = 1
        with client.ApiClient(cfg) as api:
            try:
                yield api
            finally:
                api.rest_client.pool_manager.clear()  # no connection outlives the files


@dataclass
class SpokeFacts:
    namespaces: dict[str, dict[str, str]]  # existing install namespace -> its labels
    installed: dict[str, str]  # install namespace -> Knative version this product runs there
    # The RBAC rules the spoke says this identity holds (SelfSubjectRulesReview, in each
    # install namespace); None when the spoke cannot say all of them (another authorizer).
    rules: list[dict] | None = None


RULES_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"


def granted_rules(api: client.ApiClient, namespaces: Iterable[str]) -> list[dict] | None:
    """The identity's resource rules in `namespaces` (cluster-wide grants show in each),
    or None when a review says it is incomplete."""
    rules: list[dict] = []
    for namespace in namespaces:
        review = create_json(api, RULES_REVIEW, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": namespace}})
        status = review.get("status") or {}
        if status.get("incomplete"):
            return None
        rules.extend(status.get("resourceRules") or [])
    return rules


def installed_version(api: client.ApiClient, namespace: str) -> str | None:
    """The release version of this product's Deployments in `namespace` (the oldest,
    if an upgrade was interrupted half way), or None when it installed nothing there."""
    selector = f"{MANAGED_BY_LABEL}={MANAGED_BY_VALUE}"
    items = get_json(api, f"/apis/apps/v1/namespaces/{namespace}/deployments",
                     {"labelSelector": selector}).get("items") or []
    versions = {((d.get("metadata") or {}).get("labels") or {}).get(VERSION_LABEL)
                for d in items}
    versions.discard(None)
    parsed = [v for v in versions if v and re.fullmatch(r"v?\d+\.\d+\.\d+", v)]
    if not parsed:
        return None
    return min(parsed, key=lambda v: tuple(int(p) for p in v.lstrip("v").split("."))).lstrip("v")


def read_spoke_facts(
    conn: SpokeConnection, credential: PluginCredential, names: Iterable[str]
) -> SpokeFacts:
    """Which of the install namespaces `names` exist, what runs in them, and what this
    identity may do there."""
    names = list(names)
    facts = SpokeFacts(namespaces={}, installed={})
    with spoke_api_client(conn, credential) as api:
        facts.rules = granted_rules(api, names)
        for name in names:
            try:
                ns = get_json(api, f"/api/v1/namespaces/{name}")
            except ApiException as exc:
                if exc.status == 404:
                    continue
                raise
            facts.namespaces[name] = dict((ns.get("metadata") or {}).get("labels") or {})
            version = installed_version(api, name)
            if version:
                facts.installed[name] = version
    return facts
