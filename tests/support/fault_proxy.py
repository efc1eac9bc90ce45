"""A spoke's API server behind a proxy that can be made to fail, as a real spoke's can:
429, 5xx, or no answer at all.

The ClusterProfile names the proxy and a CA bundle: the spoke's CA and a throwaway CA
of the proxy. In `pass` mode the proxy relays the TCP stream to the API server as it
is (TLS end to end, so watches and long requests work as they do against the API
server itself). In a failing mode it ends the client's TLS itself, with a certificate
for 127.0.0.1 from its own CA, and answers every request with that status (a
Kubernetes `Status` body), or, in `hang` mode, reads the request and never answers.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.http_server import _ca, _leaf

PASS = "pass"
HANG = "hang"
REASONS = {429: "Too Many Requests", 500: "Internal Server Error",
           503: "Service Unavailable", 504: "Gateway Timeout"}


def make_proxy_pki(directory: Path) -> Path:
    """`ca` and `server` (valid for 127.0.0.1), each as `.crt` and `.key`."""
    directory.mkdir(parents=True, exist_ok=True)
    _ca(directory, "ca")
    _leaf(directory, "server", "ca", "subjectAltName=IP:127.0.0.1")
    return directory


class FaultProxy:
    """One proxy for one upstream API server; `mode` is PASS, HANG or an HTTP status."""

    def __init__(self, upstream: str, upstream_ca: bytes, pki: Path) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 443)
        self.server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_side.load_cert_chain(pki / "server.crt", pki / "server.key")
        # What the ClusterProfile names: the spoke's CA (pass) and the proxy's (failing).
        self.ca = upstream_ca.rstrip(b"\n") + b"\n" + (pki / "ca.crt").read_bytes()
        self.mode: str | int = PASS
        self.answered: dict[str | int, int] = {}
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"https://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, raw: socket.socket) -> None:
        mode = self.mode
        self.answered[mode] = self.answered.get(mode, 0) + 1
        if mode == PASS:
            self._relay(raw)
            return
        try:
            conn = self.server_side.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        with contextlib.closing(conn):
            if mode == HANG:
                _read_head(conn)
                self._stop.wait(600)
            else:
                while _read_head(conn):
                    _answer(conn, int(mode))

    def _relay(self, conn: socket.socket) -> None:
        try:
            up = socket.create_connection(self.upstream, timeout=30)
        except OSError:
            conn.close()
            return
        up.settimeout(None)
        conn.settimeout(None)

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(up, conn), daemon=True)
        back.start()
        pump(conn, up)
        back.join(60)
        conn.close()
        up.close()


def _read_head(conn: ssl.SSLSocket) -> bytes:
    """One request's head and body (Content-Length), or b"" when the client is gone."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = conn.recv(65536)
        except OSError:
            return b""
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


def _answer(conn: ssl.SSLSocket, status: int) -> None:
    reason = REASONS.get(status, "Error")
    body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                       "message": f"the spoke answers {status} (fault proxy)",
                       "reason": reason.replace(" ", ""), "code": status}).encode()
    extra = b"Retry-After: 1\r\n" if status == 429 else b""
    conn.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: "
                 b"%d\r\n\r\n" % (status, reason.encode(), extra, len(body)) + body)


@contextlib.contextmanager
def fault_proxy(upstream: str, upstream_ca: bytes, pki: Path) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, upstream_ca, pki).start()
    try:
        yield proxy
    finally:
        proxy.close()
