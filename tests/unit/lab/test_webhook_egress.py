"""The lab's egress proxy: a CONNECT to a routed webhook pod reaches its local process, any
other address is dialled as asked, and an address nothing answers gets a 503 (so a webhook
whose pod is gone fails closed, as on a real spoke)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lab.webhooks.egress import (
    MAX_SOCKET_PATH,
    egress_configuration,
    parse_connect,
    serve,
    socket_path,
)


def test_the_connect_line() -> None:
    assert parse_connect(b"CONNECT 10.0.1.1:8443 HTTP/1.1\r\nHost: x\r\n\r\n") == ("10.0.1.1", 8443)
    assert parse_connect(b"CONNECT [fd00::1]:443 HTTP/1.1\r\n\r\n") == ("fd00::1", 443)
    with pytest.raises(ValueError, match="not a CONNECT"):
        parse_connect(b"GET / HTTP/1.1\r\n\r\n")


def test_a_long_lab_path_gets_a_short_socket(tmp_path: Path) -> None:
    short = socket_path(tmp_path, "spoke-1")
    assert short == tmp_path / "spoke-1.sock"
    deep = tmp_path / ("d" * 120)
    long = socket_path(deep, "spoke-1")
    assert len(str(long)) <= MAX_SOCKET_PATH and long.name == "spoke-1.sock"
    assert socket_path(deep, "spoke-2").parent == long.parent
    assert "udsName: " + str(short) in egress_configuration(short)
    assert "proxyProtocol: HTTPConnect" in egress_configuration(short)


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"echo:" + await reader.read(100))
    await writer.drain()
    writer.close()


async def _through(sock: Path, target: str) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(sock))
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " not in head:
        writer.close()
        return head
    writer.write(b"hello")
    await writer.drain()
    body = await reader.read(100)
    writer.close()
    return head + body


def test_routed_direct_and_unreachable(tmp_path: Path) -> None:
    async def scenario() -> list[bytes]:
        echo = await asyncio.start_server(_echo, "127.0.0.1", 0)
        port = echo.sockets[0].getsockname()[1]
        routes = {("10.0.1.1", 8443): ("127.0.0.1", port)}
        sock = tmp_path / "spoke.sock"
        proxy = await serve(sock, lambda h, p: routes.get((h, p)))
        try:
            return [await _through(sock, "10.0.1.1:8443"),
                    await _through(sock, f"127.0.0.1:{port}"),
                    await _through(sock, "127.0.0.1:1")]
        finally:
            proxy.close()
            echo.close()

    # a loop of its own, the thread's current one left as it was: asyncio.run() would
    # unset it, and Pulumi's mocks in the tests after this one take the current loop
    loop = asyncio.new_event_loop()
    try:
        routed, direct, closed = loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert routed.endswith(b"\r\n\r\necho:hello") and b" 200 " in routed
    assert direct.endswith(b"echo:hello")
    assert closed.startswith(b"HTTP/1.1 503")
