"""Reach the spoke once, before Pulumi does, so failures get a plain-words cause.

We use urllib3 directly (it ships with the kubernetes client) rather than the kubernetes
client: one GET /version needs no API machinery, and urllib3 lets us set SNI
(`server_hostname`), a proxy and retries=False so each failure surfaces as its own
exception `network.SPOKE` can name. The CA is loaded from memory (`cadata`), so it never touches
disk; only a client certificate/key needs files, in a private temp dir removed after.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
import warnings
from urllib.parse import urlsplit

import urllib3
from urllib3 import exceptions as u3

from core.errors import ProfileError
from core.reasons import Reason

from .connection import SpokeConnection
from .credential import PluginCredential, client_cert_files
from .network import SPOKE


def _fail(message: str) -> ProfileError:
    return ProfileError(Reason.REMOTE_CLIENT_CREATION_FAILED, message)


def _ssl_context(conn: SpokeConnection, cert_files: tuple[str, str] | None) -> ssl.SSLContext:
    if conn.insecure_skip_tls_verify:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif conn.certificate_authority_data:
        pem = base64.b64decode(conn.certificate_authority_data).decode("ascii", "replace")
        try:
            context = ssl.create_default_context(cadata=pem)
        except (ssl.SSLError, ValueError):
            raise _fail("certificate-authority-data does not hold a PEM CA certificate") from None
    else:
        context = ssl.create_default_context()  # system roots, as client-go does
    if cert_files:
        try:
            context.load_cert_chain(*cert_files)
        except ssl.SSLError:
            raise _fail("the plugin's client certificate and key do not load as PEM") from None
    return context


def _proxy(conn: SpokeConnection) -> str | None:
    """proxy-url, else http(s)_proxy/no_proxy from the environment like client-go."""
    if conn.proxy_url:
        return conn.proxy_url
    parts = urlsplit(conn.server)
    if urllib.request.proxy_bypass_environment(parts.netloc):
        return None
    return urllib.request.getproxies_environment().get(parts.scheme)


def _manager(conn: SpokeConnection, context: ssl.SSLContext, proxy: str | None):
    options = {"ssl_context": context, "server_hostname": conn.tls_server_name or None}
    if conn.insecure_skip_tls_verify:
        options["assert_hostname"] = False
    if proxy is None:
        return urllib3.PoolManager(**options)
    if proxy.startswith("socks5"):
        try:
            from urllib3.contrib.socks import SOCKSProxyManager
        except ImportError:
            raise _fail(
                f"proxy-url {proxy!r} is a SOCKS proxy, which needs the PySocks package"
            ) from None
        return SOCKSProxyManager(proxy, **options)
    return urllib3.ProxyManager(proxy, **options)


def probe_spoke(conn: SpokeConnection, cred: PluginCredential, timeout: float = 10.0) -> str:
    """GET /version with the plugin's credential; return the spoke's gitVersion."""
    url = conn.server.rstrip("/") + "/version"
    headers = {"Accept": "application/json", "User-Agent": "knative-fleet"}
    if cred.token:
        headers["Authorization"] = f"Bearer {cred.token}"
    proxy = _proxy(conn)
    with client_cert_files(cred) as cert_files:
        manager = _manager(conn, _ssl_context(conn, cert_files), proxy)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", u3.InsecureRequestWarning)
                response = manager.request(
                    "GET",
                    url,
                    headers=headers,
                    retries=False,
                    redirect=False,
                    timeout=urllib3.Timeout(connect=timeout, read=timeout),
                )
        except u3.HTTPError as exc:
            cause = SPOKE.describe(
                exc,
                server=conn.server,
                timeout=timeout,
                proxy=proxy,
                tls_server_name=conn.tls_server_name,
            )
            raise _fail(cause) from None
        finally:
            manager.clear()
    if response.status == 401:
        raise _fail(f"{cred.kind} rejected (401) by {conn.server}")
    if response.status == 403:
        raise _fail(f"{cred.kind} accepted but forbidden (403) to read {url}")
    if response.status != 200:
        raise _fail(f"unexpected HTTP {response.status} from {url}")
    try:
        version = json.loads(response.data).get("gitVersion")
    except (ValueError, AttributeError):
        version = None
    if not isinstance(version, str) or not version:
        raise _fail(f"{url} did not return a Kubernetes version (is server the API server?)")
    return version
