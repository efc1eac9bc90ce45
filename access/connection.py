"""Turn a ClusterProfile plus the provider file into how to reach the spoke (no I/O).

A port of cluster-inventory-api `BuildConfigFromCP` that keeps its provider choice and
extension semantics but fixes what is plainly a bug there: it appends profile args to
the shared provider config on every call (args pile up across spokes), its env order
comes from a Go map (random), and it drops `tls-server-name`/`insecure-skip-tls-verify`.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from core.errors import ProfileError
from core.reasons import Reason

from .provider_file import AccessProvider, ProviderFile

__all__ = [
    "ADDITIONAL_ARGS_EXTENSION",
    "ADDITIONAL_ENVS_EXTENSION",
    "EXEC_EXTENSION",
    "ProfileError",
    "SpokeConnection",
    "build_connection",
    "check_ready",
    "to_kubeconfig",
]

EXEC_EXTENSION = "client.authentication.k8s.io/exec"
ADDITIONAL_ARGS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-args"
ADDITIONAL_ENVS_EXTENSION = "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs"
HEALTHY_CONDITION = "ControlPlaneHealthy"


@dataclass(frozen=True)
class SpokeConnection:
    """Everything needed to reach one spoke; holds no credential, only how to get one."""

    server: str
    certificate_authority_data: str | None
    proxy_url: str | None
    tls_server_name: str | None
    insecure_skip_tls_verify: bool
    provider_name: str
    exec_api_version: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    provide_cluster_info: bool
    exec_extension: Any | None
    install_hint: str | None = None


def _ref(profile: Mapping[str, Any]) -> str:
    meta = profile.get("metadata") or {}
    return f"ClusterProfile {meta.get('namespace', '?')}/{meta.get('name', '?')}"


def _status(profile: Mapping[str, Any]) -> Mapping[str, Any]:
    status = profile.get("status")
    return status if isinstance(status, Mapping) else {}


def check_ready(profile: dict) -> None:
    """Require ControlPlaneHealthy=True, as the operator does before touching a spoke."""
    conditions = _status(profile).get("conditions")
    conditions = conditions if isinstance(conditions, list) else []
    for condition in conditions:
        if isinstance(condition, Mapping) and condition.get("type") == HEALTHY_CONDITION:
            status = condition.get("status")
            if status == "True":
                return
            details = ", ".join(
                f"{key} {str(condition[key])[:300]!r}"
                for key in ("reason", "message")
                if condition.get(key)
            )
            raise ProfileError(
                Reason.CLUSTER_PROFILE_NOT_READY,
                f"{_ref(profile)} has {HEALTHY_CONDITION}={status}"
                + (f" ({details})" if details else ""),
            )
    found = "no status.conditions" if _status(profile) else "no status yet"
    if conditions:
        types = sorted({str(c.get("type")) for c in conditions if isinstance(c, Mapping)})
        found = f"conditions {', '.join(types)}"
    raise ProfileError(
        Reason.CLUSTER_PROFILE_NOT_READY,
        f"{_ref(profile)} has no {HEALTHY_CONDITION} condition ({found})",
    )


def _fail(message: str) -> ProfileError:
    return ProfileError(Reason.ACCESS_PROVIDER_FAILED, message)


def _advertised(profile: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Provider name -> entry; deprecated credentialProviders first, accessProviders win."""
    status = _status(profile)
    merged: dict[str, Mapping[str, Any]] = {}
    for field in ("credentialProviders", "accessProviders"):
        for entry in status.get(field) or []:
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                merged[entry["name"]] = entry
    return merged


def _choose(
    profile: Mapping[str, Any], providers: ProviderFile
) -> tuple[AccessProvider, Mapping[str, Any]]:
    """First provider in file order that the profile advertises (upstream's rule)."""
    advertised = _advertised(profile)
    known = ", ".join(providers.names()) or "none"
    if not advertised:
        raise _fail(
            f"{_ref(profile)} advertises no access providers (status.accessProviders and "
            f"status.credentialProviders are empty); the provider file has: {known}"
        )
    for provider in providers.providers:
        if provider.name in advertised:
            return provider, advertised[provider.name]
    raise _fail(
        f"none of the access providers {_ref(profile)} advertises "
        f"({', '.join(sorted(advertised))}) is in the provider file (which has: {known})"
    )


def _url(value: Any, what: str, schemes: tuple[str, ...]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(f"{what} is missing")
    parts = urlsplit(value.strip())
    if parts.scheme not in schemes or not parts.hostname:
        raise _fail(f"{what} {value!r} is not a {'/'.join(schemes)} URL")
    return value.strip()


def _ca_data(value: Any, where: str) -> str | None:
    if value in (None, ""):
        return None
    text = "".join(value.split()) if isinstance(value, str) else None
    try:
        if text is None or not base64.b64decode(text, validate=True):
            raise ValueError
    except (ValueError, binascii.Error):
        raise _fail(f"{where}.certificate-authority-data is not valid base64") from None
    return text


def _extensions(cluster: Mapping[str, Any], where: str) -> list[tuple[str, Any]]:
    raw = cluster.get("extensions") or []
    if not isinstance(raw, list):
        raise _fail(f"{where}.extensions is not a list")
    out = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise _fail(f"{where}.extensions[{index}] has no name")
        out.append((item["name"], item.get("extension")))
    return out


def _apply_args(args: list[str], data: Any, policy: str, where: str) -> None:
    if policy in ("", "Ignore"):
        return  # upstream does not even parse the extension then
    if not isinstance(data, list) or not all(isinstance(a, str) for a in data):
        raise _fail(f"{where} extension {ADDITIONAL_ARGS_EXTENSION} must be a list of strings")
    args.extend(data)


def _apply_envs(env: list[tuple[str, str]], data: Any, policy: str, where: str) -> None:
    """AppendIfNotExists: the file's values win; Replace: the profile's values win."""
    if policy in ("", "Ignore"):
        return
    if not isinstance(data, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise _fail(
            f"{where} extension {ADDITIONAL_ENVS_EXTENSION} must be a map of string to string"
        )
    existing = {name for name, _ in env}
    if policy == "Replace":
        env[:] = [(name, data.get(name, value)) for name, value in env]
    env.extend((name, data[name]) for name in sorted(data) if name not in existing)


def build_connection(profile: dict, providers: ProviderFile) -> SpokeConnection:
    """Pick the provider and build the spoke connection like upstream BuildConfigFromCP."""
    provider, entry = _choose(profile, providers)
    where = f"{_ref(profile)} access provider {provider.name!r}: cluster"
    exec_config = provider.execConfig
    if exec_config is None:
        raise _fail(f"provider {provider.name!r} in the provider file has no execConfig")
    cluster = entry.get("cluster")
    if not isinstance(cluster, Mapping):
        raise _fail(f"{where} is missing")
    server = _url(cluster.get("server"), f"{where}.server", ("https", "http"))
    proxy_url = None
    if cluster.get("proxy-url"):
        proxy_url = _url(cluster["proxy-url"], f"{where}.proxy-url", ("http", "https", "socks5"))
    ca_data = _ca_data(cluster.get("certificate-authority-data"), where)
    insecure = cluster.get("insecure-skip-tls-verify") is True
    if insecure and ca_data:
        raise _fail(
            f"{where} sets both insecure-skip-tls-verify and certificate-authority-data, "
            "which Kubernetes clients refuse; remove one of them"
        )
    tls_server_name = cluster.get("tls-server-name") or None
    if tls_server_name is not None and not isinstance(tls_server_name, str):
        raise _fail(f"{where}.tls-server-name is not a string")

    # Fresh copies: the ProviderFile is shared by every spoke and must never change.
    args = list(exec_config.args)
    env = [(var.name, var.value) for var in exec_config.env]
    exec_extension = None
    for name, data in _extensions(cluster, where):
        if name == ADDITIONAL_ARGS_EXTENSION:
            _apply_args(args, data, provider.profileSourcedCLIArgsPolicy, where)
        elif name == ADDITIONAL_ENVS_EXTENSION:
            _apply_envs(env, data, provider.profileSourcedEnvVarsPolicy, where)
        elif name == EXEC_EXTENSION:
            if not isinstance(data, Mapping):
                raise _fail(f"{where} extension {EXEC_EXTENSION} must be an object")
            exec_extension = copy.deepcopy(dict(data))

    return SpokeConnection(
        server=server,
        certificate_authority_data=ca_data,
        proxy_url=proxy_url,
        tls_server_name=tls_server_name,
        insecure_skip_tls_verify=insecure,
        provider_name=provider.name,
        exec_api_version=exec_config.apiVersion,
        command=exec_config.command,
        args=tuple(args),
        env=tuple(env),
        provide_cluster_info=exec_config.provideClusterInfo,
        exec_extension=exec_extension,
        install_hint=exec_config.installHint,
    )


def cluster_info(conn: SpokeConnection) -> dict[str, Any]:
    """The cluster fields as clientcmd v1 / ExecCredential v1 JSON names, unset ones omitted."""
    cluster: dict[str, Any] = {"server": conn.server}
    if conn.certificate_authority_data:
        cluster["certificate-authority-data"] = conn.certificate_authority_data
    if conn.proxy_url:
        cluster["proxy-url"] = conn.proxy_url
    if conn.tls_server_name:
        cluster["tls-server-name"] = conn.tls_server_name
    if conn.insecure_skip_tls_verify:
        cluster["insecure-skip-tls-verify"] = True
    return cluster


def to_kubeconfig(conn: SpokeConnection, name: str) -> dict:
    """A kubeconfig that runs the plugin on demand; it never holds a token."""
    cluster = cluster_info(conn)
    if conn.exec_extension is not None:
        # client-go hands this to the plugin as KUBERNETES_EXEC_INFO spec.cluster.config.
        cluster["extensions"] = [{"name": EXEC_EXTENSION, "extension": conn.exec_extension}]
    exec_user: dict[str, Any] = {
        "apiVersion": conn.exec_api_version,
        "command": conn.command,
        "args": list(conn.args),
        "env": [{"name": k, "value": v} for k, v in conn.env],
        "provideClusterInfo": conn.provide_cluster_info,
        "interactiveMode": "Never",
    }
    if conn.install_hint:
        exec_user["installHint"] = conn.install_hint
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"exec": exec_user}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
    }
