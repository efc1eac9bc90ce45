"""The one connection-error classifier: what each urllib3 failure is called, for the hub
and for a spoke. (test_hub.py and test_probe.py provoke the common ones for real.)"""

from __future__ import annotations

import pytest
from urllib3 import exceptions as u3

from access.network import HUB, SPOKE, Failure, classify

SERVER = "https://spoke.example:6443"


def refused() -> u3.NewConnectionError:
    try:
        raise ConnectionRefusedError(111, "Connection refused")
    except ConnectionRefusedError:
        try:
            raise u3.NewConnectionError(None, "Failed to establish a new connection")
        except u3.NewConnectionError as exc:
            return exc


@pytest.mark.parametrize(
    ("exc", "failure"),
    [
        (u3.SSLError("certificate verify failed: unable to get local issuer certificate"),
         Failure.UNKNOWN_AUTHORITY),
        (u3.SSLError("certificate verify failed: self-signed certificate in chain"),
         Failure.UNKNOWN_AUTHORITY),
        (u3.SSLError("Hostname mismatch, certificate is not valid for 'x'"), Failure.WRONG_NAME),
        (u3.SSLError("certificate verify failed: certificate has expired"), Failure.EXPIRED),
        (u3.SSLError("[SSL: TLSV1_ALERT_UNKNOWN_CA] tlsv1 alert unknown ca"),
         Failure.CERT_REJECTED),
        (u3.SSLError("[SSL: SSLV3_ALERT_BAD_CERTIFICATE] sslv3 alert bad certificate"),
         Failure.CERT_REJECTED),
        (u3.SSLError("EOF occurred in violation of protocol"), Failure.TLS),
        (u3.NameResolutionError("spoke.example", None, OSError("nope")), Failure.DNS),
        (refused(), Failure.REFUSED),
        (u3.NewConnectionError(None, "No route to host"), Failure.CONNECT),
        (u3.ConnectTimeoutError("connect timed out"), Failure.CONNECT_TIMEOUT),
        (u3.ReadTimeoutError(None, "/version", "read timed out"), Failure.READ_TIMEOUT),
        (u3.ProtocolError("Connection aborted."), Failure.DROPPED),
        (u3.ProxyError("Unable to connect to proxy", OSError("refused")), Failure.PROXY),
        (u3.DecodeError("bad gzip"), Failure.OTHER),
    ],
)
def test_classify(exc: Exception, failure: Failure) -> None:
    assert classify(exc)[0] is failure
    # urllib3 wraps the cause in MaxRetryError when it gives up; the cause decides.
    assert classify(u3.MaxRetryError(None, "/version", exc))[0] is failure


def test_proxy_detail_is_the_original_error() -> None:
    original = OSError("connection refused by proxy")
    assert classify(u3.ProxyError("Unable to connect to proxy", original))[1] is original


def test_spoke_wording() -> None:
    def say(failure: Failure, **fields) -> str:
        return SPOKE.say(failure, server=SERVER, timeout=2.5, detail="why", **fields)

    assert say(Failure.DNS) == f"cannot resolve host 'spoke.example' of {SERVER}"
    assert say(Failure.WRONG_NAME, tls_server_name="spoke.internal") == (
        "TLS verification failed: the certificate is not valid for 'spoke.internal'")
    assert say(Failure.WRONG_NAME) == (
        "TLS verification failed: the certificate is not valid for 'spoke.example'")
    assert say(Failure.CONNECT_TIMEOUT) == f"timed out after 2.5 s connecting to {SERVER}"
    assert say(Failure.PROXY, proxy="http://proxy:3128") == "proxy http://proxy:3128 failed: why"
    assert say(Failure.CERT_REJECTED) == f"{SERVER} rejected the client certificate: why"


def test_hub_wording_falls_back_to_wider_failures() -> None:
    def say(failure: Failure) -> str:
        return HUB.say(failure, server=SERVER, timeout=10, detail="why")

    assert say(Failure.REFUSED) == f"connection refused by the hub at {SERVER}"
    assert say(Failure.EXPIRED) == f"TLS to the hub at {SERVER} failed: why"
    assert say(Failure.CERT_REJECTED) == f"TLS to the hub at {SERVER} failed: why"
    assert say(Failure.READ_TIMEOUT) == f"the hub at {SERVER} did not answer within 10 s"
    assert say(Failure.DROPPED) == f"cannot reach the hub at {SERVER}: why"
