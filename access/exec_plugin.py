"""Run the access provider's exec plugin ourselves, the way client-go would.

client-go (inside the operator or pulumi-kubernetes) only reports "exit status 1" and
drops the plugin's stderr, which is where the plugin says what is wrong ("secret
fleet-system/spoke-1 not found"). Running it here lets us quote it to the user.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from typing import Any

from core.errors import ProfileError
from core.reasons import Reason

from .connection import SpokeConnection, cluster_info
from .credential import PluginCredential
from .redact import redact

STDERR_LIMIT = 2048


def _fail(message: str) -> ProfileError:
    return ProfileError(Reason.ACCESS_PROVIDER_FAILED, message)


def exec_info(conn: SpokeConnection) -> dict[str, Any]:
    """The KUBERNETES_EXEC_INFO ExecCredential client-go passes to the plugin."""
    spec: dict[str, Any] = {"interactive": False}
    if conn.provide_cluster_info:
        cluster = cluster_info(conn)
        if conn.exec_extension is not None:
            cluster["config"] = conn.exec_extension
        spec["cluster"] = cluster
    return {"apiVersion": conn.exec_api_version, "kind": "ExecCredential", "spec": spec}


def _plugin_env(conn: SpokeConnection) -> dict[str, str]:
    """Our environment plus the provider file's env (which wins), as client-go does."""
    env = dict(os.environ)
    env.update(conn.env)
    env["KUBERNETES_EXEC_INFO"] = json.dumps(exec_info(conn))
    return env


def _resolve_command(conn: SpokeConnection) -> str:
    hint = f" Install hint: {conn.install_hint}" if conn.install_hint else ""
    where = "it must exist on the machine running pulumi, not only in an operator image"
    command = conn.command
    if os.sep not in command:
        found = shutil.which(command)
        if found is None:
            raise _fail(
                f"credential plugin {command!r} (provider {conn.provider_name!r}) is not on "
                f"PATH; {where}.{hint}"
            )
        return found
    if not os.path.exists(command):
        raise _fail(
            f"credential plugin {command!r} (provider {conn.provider_name!r}) does not exist; "
            f"{where}.{hint}"
        )
    if os.path.isdir(command) or not os.access(command, os.X_OK):
        raise _fail(f"credential plugin {command!r} is not an executable file (chmod +x?)")
    return command


def _stderr_excerpt(stderr: bytes, stdout: bytes) -> str:
    """Plugin stderr, redacted (also of anything the plugin put on stdout) and trimmed."""
    known: list[str] = []
    try:
        status = json.loads(stdout).get("status") or {}
        known = [v for v in status.values() if isinstance(v, str)]
    except (ValueError, AttributeError):
        pass
    # Redact a bounded tail (cut well before what we keep, so no half token survives).
    text = redact(stderr[-4 * STDERR_LIMIT :].decode("utf-8", errors="replace"), known).strip()
    if len(text) > STDERR_LIMIT:
        text = "...(trimmed) " + text[-STDERR_LIMIT:]
    return text or "(no stderr)"


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    try:
        process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # so a timeout can kill the plugin and its children
        )
    except PermissionError:
        raise _fail(f"credential plugin {argv[0]!r} is not executable (chmod +x?)") from None
    except OSError as exc:
        raise _fail(
            f"credential plugin {argv[0]!r} cannot be started: {exc.strerror} (a binary for "
            "another OS or CPU architecture, or a script without a #! line)"
        ) from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        raise _fail(
            f"credential plugin {argv[0]!r} timed out after {timeout:g} s and was killed "
            "(is it waiting for a network call or for input?)"
        ) from None
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def _parse(conn: SpokeConnection, stdout: bytes) -> PluginCredential:
    """Validate the ExecCredential like client-go; messages never quote stdout."""
    name = f"credential plugin {conn.command!r}"
    try:
        data = json.loads(stdout)
    except ValueError:
        raise _fail(f"{name} did not print an ExecCredential JSON object on stdout") from None
    if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
        raise _fail(f"{name} printed JSON that is not an ExecCredential")
    if data.get("apiVersion") != conn.exec_api_version:
        raise _fail(
            f"{name} returned apiVersion {str(data.get('apiVersion'))[:80]!r}, but the "
            f"provider file configures {conn.exec_api_version!r}"
        )
    status = data.get("status")
    if not isinstance(status, dict):
        raise _fail(f"{name} returned an ExecCredential without status")
    values = {
        key: status.get(key) if isinstance(status.get(key), str) and status.get(key) else None
        for key in ("token", "clientCertificateData", "clientKeyData", "expirationTimestamp")
    }
    has_cert, has_key = values["clientCertificateData"], values["clientKeyData"]
    if bool(has_cert) != bool(has_key):
        raise _fail(f"{name} returned a client certificate without its key, or a key alone")
    if not values["token"] and not has_cert:
        raise _fail(f"{name} returned neither a token nor a client certificate")
    return PluginCredential(
        token=values["token"],
        client_certificate_data=has_cert,
        client_key_data=has_key,
        expiration_timestamp=values["expirationTimestamp"],
    )


def run_exec_plugin(conn: SpokeConnection, timeout: float = 30.0) -> PluginCredential:
    """Run the plugin once and return its credential (a token, a client certificate, or both)."""
    command = _resolve_command(conn)
    result = _run([command, *conn.args], _plugin_env(conn), timeout)
    if result.returncode != 0:
        how = (
            f"was killed by signal {-result.returncode}"
            if result.returncode < 0
            else f"exited with code {result.returncode}"
        )
        raise _fail(
            f"credential plugin {conn.command!r} (provider {conn.provider_name!r}) {how}; "
            "its stderr: "
            f"{_stderr_excerpt(result.stderr, result.stdout)}"
        )
    return _parse(conn, result.stdout)
