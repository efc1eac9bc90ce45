"""A plugin credential in files only while a client needs them, and nowhere in plain text."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from access import PluginCredential, spoke_api_client
from access.credential import client_cert_files
from tests.support.factories import spoke_connection

CERT = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIkey\n-----END EC PRIVATE KEY-----\n"
CERT_CREDENTIAL = PluginCredential(client_certificate_data=CERT, client_key_data=KEY)


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_cert_files_are_private_and_removed(private_tmp: Path) -> None:
    with client_cert_files(CERT_CREDENTIAL) as paths:
        assert paths is not None
        cert, key = paths
        assert (Path(cert).read_text(), Path(key).read_text()) == (CERT, KEY)
        assert (mode(cert), mode(key)) == (0o600, 0o600)
        assert mode(os.path.dirname(cert)) == 0o700
    assert list(private_tmp.iterdir()) == []


def test_cert_files_are_removed_when_the_block_fails(private_tmp: Path) -> None:
    with pytest.raises(RuntimeError), client_cert_files(CERT_CREDENTIAL):
        raise RuntimeError("boom")
    assert list(private_tmp.iterdir()) == []


def test_a_token_needs_no_files(private_tmp: Path) -> None:
    with client_cert_files(PluginCredential(token="t")) as paths:
        assert paths is None
        assert list(private_tmp.iterdir()) == []


def test_kind_secrets_and_repr() -> None:
    both = PluginCredential(token="tok", client_certificate_data=CERT, client_key_data=KEY,
                            expiration_timestamp="2030-01-01T00:00:00Z")
    assert both.kind == "token" and CERT_CREDENTIAL.kind == "client certificate"
    assert both.secrets() == ["tok", CERT, KEY]
    assert "tok" not in repr(both) and "MHcCAQEEIkey" not in repr(both)
    assert "2030-01-01T00:00:00Z" in repr(both)


def test_spoke_api_client_uses_the_cert_files_while_open(private_tmp: Path) -> None:
    with spoke_api_client(spoke_connection(), CERT_CREDENTIAL) as api:
        cfg = api.configuration
        assert Path(cfg.key_file).read_text() == KEY
        assert Path(cfg.cert_file).read_text() == CERT
        assert "authorization" not in (cfg.api_key or {})
    assert not os.path.exists(cfg.key_file)
    assert list(private_tmp.iterdir()) == []


def test_spoke_api_client_with_a_token(private_tmp: Path) -> None:
    with spoke_api_client(spoke_connection(), PluginCredential(token="tok")) as api:
        cfg = api.configuration
        assert cfg.api_key == {"authorization": "Bearer tok"}
        assert cfg.cert_file is None and cfg.key_file is None
