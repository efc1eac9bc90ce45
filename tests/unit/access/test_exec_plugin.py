"""run_exec_plugin against tiny fake plugins: what client-go would do, plus stderr."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from access import PluginCredential, ProfileError, Reason, SpokeConnection, run_exec_plugin

V1 = "client.authentication.k8s.io/v1"
TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmbGVldCJ9.c2lnbmF0dXJlLXZhbHVl"


def plugin(tmp_path: Path, body: str, name: str = "plugin") -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys, time\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def conn(command: str, **changes) -> SpokeConnection:
    base = SpokeConnection(
        server="https://10.0.0.1:6443",
        certificate_authority_data="Q0E=",
        proxy_url=None,
        tls_server_name="spoke.internal",
        insecure_skip_tls_verify=False,
        provider_name="secretreader",
        exec_api_version=V1,
        command=command,
        args=("--flag", "value"),
        env=(("FROM_FILE", "file"), ("SHARED", "file")),
        provide_cluster_info=True,
        exec_extension={"clusterName": "spoke-1"},
    )
    return replace(base, **changes)


ECHO = """
record = {"info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]), "argv": sys.argv[1:],
          "env": {k: os.environ.get(k) for k in ("FROM_FILE", "SHARED", "EXTRA", "PATH")},
          "stdin": sys.stdin.read(), "isatty": sys.stdin.isatty()}
open(os.environ["RECORD"], "w").write(json.dumps(record))
print(json.dumps({"apiVersion": "V1", "kind": "ExecCredential",
                  "status": {"token": "TOKEN", "expirationTimestamp": "2030-01-01T00:00:00Z"}}))
""".replace("V1", V1).replace("TOKEN", TOKEN)


def failing(tmp_path: Path, body: str, **changes) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        run_exec_plugin(conn(plugin(tmp_path, body), **changes), timeout=5)
    assert caught.value.reason is Reason.ACCESS_PROVIDER_FAILED
    assert TOKEN not in caught.value.message
    return caught.value


def test_success_returns_token_and_passes_exec_info(tmp_path: Path, monkeypatch) -> None:
    record = tmp_path / "record.json"
    monkeypatch.setenv("RECORD", str(record))
    monkeypatch.setenv("SHARED", "os")
    monkeypatch.setenv("EXTRA", "os")
    command = plugin(tmp_path, ECHO)
    credential = run_exec_plugin(conn(command))
    assert credential == PluginCredential(token=TOKEN, expiration_timestamp="2030-01-01T00:00:00Z")
    assert credential.kind == "token"
    assert TOKEN not in repr(credential)
    seen = json.loads(record.read_text())
    assert seen["info"] == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {
            "interactive": False,
            "cluster": {
                "server": "https://10.0.0.1:6443",
                "certificate-authority-data": "Q0E=",
                "tls-server-name": "spoke.internal",
                "config": {"clusterName": "spoke-1"},
            },
        },
    }
    assert seen["argv"] == ["--flag", "value"]
    assert seen["env"]["FROM_FILE"] == "file"
    assert seen["env"]["SHARED"] == "file"  # the provider file's env beats ours
    assert seen["env"]["EXTRA"] == "os"  # the rest of ours is inherited, as in client-go
    assert seen["env"]["PATH"] == os.environ["PATH"]
    assert seen["stdin"] == "" and seen["isatty"] is False


def test_cluster_info_only_when_asked(tmp_path: Path, monkeypatch) -> None:
    record = tmp_path / "record.json"
    monkeypatch.setenv("RECORD", str(record))
    run_exec_plugin(conn(plugin(tmp_path, ECHO), provide_cluster_info=False))
    assert json.loads(record.read_text())["info"]["spec"] == {"interactive": False}


def test_client_certificate_credential(tmp_path: Path) -> None:
    body = f"""print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential", "status": {{
        "clientCertificateData": "CERT", "clientKeyData": "KEY"}}}}))"""
    credential = run_exec_plugin(conn(plugin(tmp_path, body)))
    assert credential == PluginCredential(client_certificate_data="CERT", client_key_data="KEY")
    assert credential.kind == "client certificate"
    assert "KEY" not in repr(credential) and "CERT" not in repr(credential)


def test_nonzero_exit_quotes_stderr_without_secrets(tmp_path: Path) -> None:
    body = f"""
sys.stderr.write("[secretreader] failed to get secret fleet-system/spoke-1: not found\\n")
sys.stderr.write("debug: read token={TOKEN}\\n")
print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential",
                   "status": {{"token": "plain-stdout-token-value"}}}}))
sys.exit(3)"""
    err = failing(tmp_path, body)
    assert "exited with code 3" in err.message
    assert "failed to get secret fleet-system/spoke-1: not found" in err.message
    assert "plain-stdout-token-value" not in err.message
    assert "<redacted>" in err.message


def test_long_stderr_is_trimmed_to_its_tail(tmp_path: Path) -> None:
    err = failing(tmp_path, 'sys.stderr.write("x" * 10000 + " the real cause"); sys.exit(1)')
    assert err.message.endswith("the real cause")
    assert len(err.message) < 2400


def test_missing_binary(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-plugin")
    with pytest.raises(ProfileError) as caught:
        run_exec_plugin(conn(missing, install_hint="brew install plugin"))
    assert caught.value.reason is Reason.ACCESS_PROVIDER_FAILED
    assert f"{missing!r}" in caught.value.message
    assert "must exist on the machine running pulumi" in caught.value.message
    assert "brew install plugin" in caught.value.message
    with pytest.raises(ProfileError, match="is not on PATH"):
        run_exec_plugin(conn("knative-fleet-no-such-plugin"))


def test_not_executable(tmp_path: Path) -> None:
    path = tmp_path / "plugin"
    path.write_text("#!/bin/sh\n")
    with pytest.raises(ProfileError, match="not an executable file"):
        run_exec_plugin(conn(str(path)))


def test_exec_format_error(tmp_path: Path) -> None:
    path = tmp_path / "plugin"
    path.write_bytes(b"\x7fELF\x02\x01\x01garbage")
    path.chmod(0o755)
    with pytest.raises(ProfileError, match="another OS or CPU architecture"):
        run_exec_plugin(conn(str(path)))


def test_hang_times_out_and_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    body = f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    started = time.monotonic()
    with pytest.raises(ProfileError) as caught:
        run_exec_plugin(conn(plugin(tmp_path, body)), timeout=1)
    err = caught.value
    assert time.monotonic() - started < 10
    assert "timed out after 1 s" in err.message
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("stdout", "fragment"),
    [
        ("not json", "did not print an ExecCredential JSON object"),
        ('{"kind": "Other"}', "not an ExecCredential"),
        (
            '{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",'
            ' "status": {"token": "t"}}',
            "returned apiVersion",
        ),
        (f'{{"apiVersion": "{V1}", "kind": "ExecCredential"}}', "without status"),
        (
            f'{{"apiVersion": "{V1}", "kind": "ExecCredential", "status": {{}}}}',
            "neither a token nor a client certificate",
        ),
        (
            f'{{"apiVersion": "{V1}", "kind": "ExecCredential", "status": '
            '{"clientCertificateData": "C"}}',
            "without its key",
        ),
    ],
)
def test_bad_output(tmp_path: Path, stdout: str, fragment: str) -> None:
    err = failing(tmp_path, f"print({stdout!r})")
    assert fragment in err.message
