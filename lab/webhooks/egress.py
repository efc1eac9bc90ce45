"""Each lab cluster's `cluster` egress: kube-apiserver dials pods and services through an
HTTP CONNECT proxy on a Unix socket, which sends the address of a webhook pod the host
runs to that pod's local process and any other address straight on."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path

# A Unix socket's path must fit in sun_path (108 bytes with its terminating zero).
MAX_SOCKET_PATH = 100
CONNECT_TIMEOUT_S = 5.0
BUFFER = 65536

Route = Callable[[str, int], tuple[str, int] | None]


def socket_path(egress_dir: Path, cluster: str) -> Path:
    """Where cluster `cluster`'s proxy listens: in the lab's egress dir, or, when that path
    is too long for a Unix socket, in a short directory of the temp dir named after it."""
    path = egress_dir / f"{cluster}.sock"
    if len(str(path)) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(egress_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"kf-egress-{digest}" / f"{cluster}.sock"


def egress_configuration(sock: Path) -> str:
    """kube-apiserver's --egress-selector-config-file: the `cluster` egress over HTTP
    CONNECT on `sock`; the control plane and etcd are dialled directly."""
    return (
        "apiVersion: apiserver.k8s.io/v1beta1\n"
        "kind: EgressSelectorConfiguration\n"
        "egressSelections:\n"
        "- name: cluster\n"
        "  connection:\n"
        "    proxyProtocol: HTTPConnect\n"
        "    transport:\n"
        "      uds:\n"
        f"        udsName: {sock}\n"
    )


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(BUFFER):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def parse_connect(head: bytes) -> tuple[str, int]:
    """The target of an HTTP CONNECT request's first line (`CONNECT host:port HTTP/1.1`)."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    method, _, rest = line.partition(" ")
    target = rest.split(" ", 1)[0]
    host, sep, port = target.rpartition(":")
    if method != "CONNECT" or not sep or not port.isdigit():
        raise ValueError(f"not a CONNECT request: {line!r}")
    return host.strip("[]"), int(port)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 route: Route) -> None:
    """One tunnel: the CONNECT request, then bytes both ways until either side closes. A
    target that cannot be reached answers 503, which the API server reports (and a webhook
    whose failurePolicy is Fail then refuses the object)."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_TIMEOUT_S)
        host, port = parse_connect(head)
        target = route(host, port) or (host, port)
        up_reader, up_writer = await asyncio.wait_for(
            asyncio.open_connection(*target), CONNECT_TIMEOUT_S)
    except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError):
        with contextlib.suppress(Exception):
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\n\r\n")
            await writer.drain()
            writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def serve(sock: Path, route: Route) -> asyncio.AbstractServer:
    """The proxy of one cluster on `sock` (replacing a stale socket file)."""
    sock.parent.mkdir(parents=True, exist_ok=True)
    sock.unlink(missing_ok=True)
    return await asyncio.start_unix_server(lambda r, w: handle(r, w, route), path=str(sock))
