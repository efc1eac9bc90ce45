"""Resolve one fleet entry's clusterProfileRef into a reachable spoke (SPEC section 1).

Every failure becomes a ResolutionError carrying the spoke, the operator's reason name
and the fix, so the caller can skip that spoke, keep the rest of the fleet converging,
and report all broken spokes at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes.client import ApiClient

from .connection import SpokeConnection, build_connection, check_ready
from .exec_plugin import fetch_credential
from .hub import read_cluster_profile
from .probe import probe_spoke
from .provider_file import ProviderFile
from .reasons import ProfileError, Reason, ResolutionError


@dataclass
class ResolvedSpoke:
    """A spoke we can reach; `server_version` is "" when resolved without probing."""

    spoke: str
    profile_ref: tuple[str, str]
    connection: SpokeConnection
    server_version: str


def _steps(
    namespace: str,
    name: str,
    hub: ApiClient | None,
    providers: ProviderFile | None,
    hub_error: Exception | None,
    plugin_timeout: float,
    extra_env: dict[str, str] | None,
    probe: bool,
) -> tuple[SpokeConnection, str]:
    # Without a provider file no spoke client can ever be built, so say that first
    # (as the operator does) instead of reporting hub trouble the user cannot act on yet.
    if providers is None:
        raise ProfileError(
            Reason.MULTICLUSTER_DISABLED,
            f"the fleet entry references ClusterProfile {namespace}/{name} but no access "
            "provider file is configured",
        )
    if hub_error is not None:
        if isinstance(hub_error, ProfileError):
            raise hub_error
        raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, f"no hub client: {hub_error}")
    if hub is None:
        raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE, "no hub client is configured")
    profile = read_cluster_profile(hub, namespace, name)
    check_ready(profile)
    connection = build_connection(profile, providers)
    if not probe:
        return connection, ""
    credential = fetch_credential(connection, plugin_timeout, extra_env)
    return connection, probe_spoke(connection, credential)


def resolve_spoke(
    spoke: str,
    namespace: str,
    name: str,
    *,
    hub: ApiClient | None,
    providers: ProviderFile | None,
    hub_error: Exception | None = None,
    plugin_timeout: float = 30.0,
    extra_env: dict[str, str] | None = None,
    probe: bool = True,
) -> ResolvedSpoke:
    """Read, check and reach the spoke; raise ResolutionError naming spoke, reason and fix.

    `hub_error` is what building the hub client raised, so that one bad hub config turns
    into a per-spoke ClusterProfileUnavailable instead of crashing the program.
    `probe=False` stops after building the connection (no plugin run, no network to the
    spoke). `extra_env` is passed to the plugin for names its env does not set.
    """
    try:
        connection, version = _steps(
            namespace, name, hub, providers, hub_error, plugin_timeout, extra_env, probe
        )
    except ProfileError as exc:
        raise ResolutionError(spoke, exc.reason, exc.message) from None
    return ResolvedSpoke(spoke, (namespace, name), connection, version)
