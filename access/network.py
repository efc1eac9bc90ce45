"""Name a failed HTTP(S) request in the words a user would search for.

The hub reader and the spoke probe both talk to an API server through urllib3 and fail
the same ways, so one classifier decides what went wrong. Only the wording differs: a
hub failure names "the hub", a spoke failure the spoke's server URL (the user has many).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from urllib3 import exceptions as u3


class Failure(enum.Enum):
    """What went wrong on the way to a server."""

    PROXY = "proxy"
    UNKNOWN_AUTHORITY = "unknown-authority"
    WRONG_NAME = "wrong-name"
    EXPIRED = "expired"
    CERT_REJECTED = "cert-rejected"
    TLS = "tls"
    DNS = "dns"
    REFUSED = "refused"
    CONNECT = "connect"
    CONNECT_TIMEOUT = "connect-timeout"
    READ_TIMEOUT = "read-timeout"
    DROPPED = "dropped"
    OTHER = "other"


# A wording without a message for a failure uses the wider one's, then OTHER's.
_WIDER = {
    Failure.UNKNOWN_AUTHORITY: Failure.TLS,
    Failure.WRONG_NAME: Failure.TLS,
    Failure.EXPIRED: Failure.TLS,
    Failure.CERT_REJECTED: Failure.TLS,
    Failure.READ_TIMEOUT: Failure.CONNECT_TIMEOUT,
}


_CERT_ALERTS = ("unknown ca", "bad certificate", "certificate unknown", "certificate required")


def _tls_failure(text: str) -> Failure:
    if "unable to get local issuer" in text or "self-signed" in text or "self signed" in text:
        return Failure.UNKNOWN_AUTHORITY
    if "mismatch" in text or "doesn't match" in text:
        return Failure.WRONG_NAME
    if "expired" in text:
        return Failure.EXPIRED
    # A TLS alert is the server's verdict: it refused the client certificate we sent.
    if any(f"alert {name}" in text.lower() for name in _CERT_ALERTS):
        return Failure.CERT_REJECTED
    return Failure.TLS


def classify(exc: BaseException) -> tuple[Failure, BaseException]:
    """The failure and the exception that best explains it (urllib3 wraps the cause)."""
    inner = exc.reason if isinstance(exc, u3.MaxRetryError) and exc.reason else exc
    if isinstance(inner, u3.ProxyError):
        return Failure.PROXY, inner.original_error or inner
    if isinstance(inner, u3.SSLError):
        return _tls_failure(str(inner)), inner
    if isinstance(inner, u3.NameResolutionError):
        return Failure.DNS, inner
    if isinstance(inner, u3.NewConnectionError):
        cause = inner.__cause__ or inner.__context__
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(inner):
            return Failure.REFUSED, inner
        return Failure.CONNECT, inner
    if isinstance(inner, u3.ConnectTimeoutError):
        return Failure.CONNECT_TIMEOUT, inner
    if isinstance(inner, u3.ReadTimeoutError):
        return Failure.READ_TIMEOUT, inner
    if isinstance(inner, u3.ProtocolError):
        return Failure.DROPPED, inner
    return Failure.OTHER, inner


@dataclass(frozen=True)
class Wording:
    """Message templates for one kind of server.

    Fields: {server} (URL), {hostname} (its host), {tls_name} (the name the certificate
    must carry), {proxy}, {timeout} (seconds) and {detail} (the underlying error).
    """

    messages: Mapping[Failure, str]

    def say(
        self,
        failure: Failure,
        *,
        server: str,
        timeout: float,
        detail: object = "",
        proxy: str | None = None,
        tls_server_name: str | None = None,
    ) -> str:
        """The message for `failure`, from the most specific template this wording has."""
        template = (
            self.messages.get(failure)
            or self.messages.get(_WIDER.get(failure, Failure.OTHER))
            or self.messages[Failure.OTHER]
        )
        hostname = urlsplit(server).hostname
        return template.format(
            server=server,
            hostname=hostname,
            tls_name=tls_server_name or hostname,
            proxy=proxy,
            timeout=timeout,
            detail=detail,
        )

    def describe(
        self,
        exc: BaseException,
        *,
        server: str,
        timeout: float,
        proxy: str | None = None,
        tls_server_name: str | None = None,
    ) -> str:
        """Classify `exc` and say what happened in this wording."""
        failure, inner = classify(exc)
        return self.say(
            failure,
            server=server,
            timeout=timeout,
            detail=inner,
            proxy=proxy,
            tls_server_name=tls_server_name,
        )


HUB = Wording(
    {
        Failure.TLS: "TLS to the hub at {server} failed: {detail}",
        Failure.DNS: "cannot resolve the hub host {server}",
        Failure.REFUSED: "connection refused by the hub at {server}",
        Failure.CONNECT: "cannot connect to the hub at {server}: {detail}",
        Failure.CONNECT_TIMEOUT: "the hub at {server} did not answer within {timeout:g} s",
        Failure.OTHER: "cannot reach the hub at {server}: {detail}",
    }
)

SPOKE = Wording(
    {
        Failure.PROXY: "proxy {proxy} failed: {detail}",
        Failure.UNKNOWN_AUTHORITY: (
            "TLS verification failed: certificate signed by unknown authority"
        ),
        Failure.WRONG_NAME: (
            "TLS verification failed: the certificate is not valid for {tls_name!r}"
        ),
        Failure.EXPIRED: "TLS verification failed: the server certificate has expired",
        Failure.CERT_REJECTED: "{server} rejected the client certificate: {detail}",
        Failure.TLS: "TLS handshake with {server} failed: {detail}",
        Failure.DNS: "cannot resolve host {hostname!r} of {server}",
        Failure.REFUSED: "connection refused at {server}",
        Failure.CONNECT: "cannot connect to {server}: {detail}",
        Failure.CONNECT_TIMEOUT: "timed out after {timeout:g} s connecting to {server}",
        Failure.READ_TIMEOUT: (
            "{server} accepted the connection but did not answer within {timeout:g} s"
        ),
        Failure.DROPPED: "connection to {server} was dropped: {detail}",
        Failure.OTHER: "cannot reach {server}: {detail}",
    }
)
