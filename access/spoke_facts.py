"""Reads the few live facts a plan needs from a spoke (which install namespaces
exist, whether this product created them, which Knative version it runs there, which
stack's record its anchors carry and whether one is being deleted, and whether the
Knative Operator still has a CR there), with the credential the access provider just
issued. A token lives only in memory; a client certificate and key only in a private
temp dir while the client is open."""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kubernetes import client
from kubernetes.client.rest import ApiException

from core.names import (
    CR_NAME,
    KIND,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    NAMESPACE,
    VERSION_LABEL,
    anchor_name,
)
from core.refused import is_refused

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
    # Who the spoke says the credentials are for (SelfSubjectReview): the user name and its
    # groups; None when the spoke cannot say (an API server before Kubernetes 1.28).
    identity: tuple[str, tuple[str, ...]] | None = None
    # Its rules in a namespace the fleet binds nothing in (`default`): what it may do
    # without the plan's own bindings; None when the spoke cannot say all of them.
    rules_elsewhere: list[dict] | None = None
    # "namespace/name" of each install anchor present -> its annotations (the owner record).
    anchors: dict[str, dict[str, str]] = field(default_factory=dict)
    # "namespace/name" of each install anchor present -> when its deletion began, for the
    # anchors being deleted: the garbage collector is still deleting what they own.
    anchors_deleting: dict[str, str] = field(default_factory=dict)
    # "Kind namespace/name" of every KnativeServing and KnativeEventing on the spoke.
    operator_crs: tuple[str, ...] = ()
    # Reads the identity was refused ("list knativeservings.operator.knative.dev"): the
    # facts above cannot say what they would have.
    unreadable: tuple[str, ...] = ()


# The Knative Operator's CRs, listed across namespaces (OPERATOR_READS in fleet.rights).
OPERATOR_GROUP_VERSION = "operator.knative.dev/v1beta1"
OPERATOR_PLURALS = {"KnativeServing": "knativeservings", "KnativeEventing": "knativeeventings"}


def anchor_names() -> dict[str, str]:
    """{install namespace: the name of the install's anchor ConfigMap there}."""
    return {NAMESPACE[c]: anchor_name(KIND[c], CR_NAME[c]) for c in NAMESPACE}


def read_anchor_metadata(api: client.ApiClient, namespace: str, name: str) -> dict | None:
    """The anchor's metadata, or None when there is no anchor."""
    try:
        cm = get_json(api, f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return dict(cm.get("metadata") or {})


def read_anchor(api: client.ApiClient, namespace: str, name: str) -> dict[str, str] | None:
    """The anchor's annotations, or None when there is no anchor."""
    meta = read_anchor_metadata(api, namespace, name)
    return None if meta is None else dict(meta.get("annotations") or {})


def read_anchors(api: client.ApiClient) -> dict[str, dict[str, str] | None]:
    """{"namespace/name" of each install anchor: its annotations, None when absent}."""
    return {f"{namespace}/{name}": read_anchor(api, namespace, name)
            for namespace, name in anchor_names().items()}


def operator_crs(api: client.ApiClient) -> tuple[str, ...]:
    """Every KnativeServing and KnativeEventing on the spoke; none when the operator's
    CRDs are absent (the list answers 404)."""
    found = []
    for kind, plural in OPERATOR_PLURALS.items():
        try:
            items = get_json(api, f"/apis/{OPERATOR_GROUP_VERSION}/{plural}").get("items") or []
        except ApiException as exc:
            if exc.status == 404:
                continue
            raise
        for item in items:
            meta = item.get("metadata") or {}
            found.append(f"{kind} {meta.get('namespace', '')}/{meta.get('name', '')}")
    return tuple(sorted(found))


RULES_REVIEW = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
SELF_REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
UNBOUND_NAMESPACE = "default"  # every cluster has it; the fleet binds nothing there


def who_am_i(api: client.ApiClient) -> tuple[str, tuple[str, ...]] | None:
    """(user name, groups) the spoke authenticates these credentials as; None when it
    serves no SelfSubjectReview (or refuses it: the check it feeds is then skipped)."""
    try:
        review = create_json(api, SELF_REVIEW, {
            "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    except ApiException as exc:
        if exc.status == 404 or is_refused(exc):
            return None
        raise
    user = ((review.get("status") or {}).get("userInfo") or {})
    return str(user.get("username") or ""), tuple(user.get("groups") or ())


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
    """Which of the install namespaces `names` exist, what runs in them, whose record
    their anchors carry (and which of them are being deleted), whether the Knative
    Operator has a CR on the spoke, and what this identity may do there. A read the
    identity is refused is named in `unreadable` (the planner refuses the spoke), not
    raised."""
    names = list(names)
    facts = SpokeFacts(namespaces={}, installed={})
    unreadable: list[str] = []
    anchors = anchor_names()
    with spoke_api_client(conn, credential) as api:
        facts.rules = granted_rules(api, names)
        facts.identity = who_am_i(api)
        facts.rules_elsewhere = granted_rules(api, [UNBOUND_NAMESPACE])
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
            if name in anchors:
                try:
                    meta = read_anchor_metadata(api, name, anchors[name])
                except ApiException as exc:
                    if not is_refused(exc):
                        raise
                    unreadable.append(f"get configmaps in {name}")
                else:
                    if meta is not None:
                        key = f"{name}/{anchors[name]}"
                        facts.anchors[key] = dict(meta.get("annotations") or {})
                        if meta.get("deletionTimestamp"):
                            facts.anchors_deleting[key] = str(meta["deletionTimestamp"])
        try:
            facts.operator_crs = operator_crs(api)
        except ApiException as exc:
            if not is_refused(exc):
                raise
            unreadable.append("list " + ", ".join(
                f"{p}.{OPERATOR_GROUP_VERSION.split('/')[0]}" for p in OPERATOR_PLURALS.values()))
    facts.unreadable = tuple(unreadable)
    return facts
