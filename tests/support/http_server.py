"""A throwaway HTTP(S) server on 127.0.0.1 for unit tests of code that talks HTTP,
and a throwaway PKI (openssl CLI) so the TLS and client-certificate paths run for real."""

from __future__ import annotations

import base64
import contextlib
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # failed handshakes are expected
        pass


@contextlib.contextmanager
def serve(
    handler: Callable[..., BaseHTTPRequestHandler], context: ssl.SSLContext | None = None
) -> Iterator[str]:
    """Serves `handler` on a free loopback port (HTTPS with `context`); yields the base URL."""
    server = _QuietServer(("127.0.0.1", 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        scheme = "https" if context else "http"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _openssl(directory: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)


def _key_and_request(directory: Path, name: str, *extra: str) -> None:
    _openssl(directory, "req", *extra, "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.{'crt' if extra else 'csr'}", "-subj", f"/CN={name}")


def _ca(directory: Path, name: str) -> None:
    _key_and_request(directory, name, "-x509", "-days", "1")


def _leaf(directory: Path, name: str, ca: str, ext: str) -> None:
    (directory / f"{name}.ext").write_text(ext + "\n")
    _key_and_request(directory, name)
    _openssl(directory, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt",
             "-CAkey", f"{ca}.key", "-CAcreateserial", "-out", f"{name}.crt", "-days", "1",
             "-extfile", f"{name}.ext")


def make_pki(directory: Path) -> Path:
    """ca, other-ca, server (valid for spoke.internal) and client (clientAuth, signed by
    ca): each as `<name>.crt` and `<name>.key` (PEM) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    _ca(directory, "ca")
    _ca(directory, "other-ca")
    _leaf(directory, "server", "ca", "subjectAltName=DNS:spoke.internal")
    _leaf(directory, "client", "ca", "extendedKeyUsage=clientAuth")
    return directory


def server_context(pki: Path, client_certs: int = ssl.CERT_OPTIONAL) -> ssl.SSLContext:
    """The server side: the `server` certificate, client certificates checked against `ca`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    context.load_verify_locations(pki / "ca.crt")
    context.verify_mode = client_certs
    return context


def b64(path: Path) -> str:
    """A file as base64, as kubeconfigs and ClusterProfiles carry CA certificates."""
    return base64.b64encode(path.read_bytes()).decode()
