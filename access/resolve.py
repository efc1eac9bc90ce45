"""Resolve one fleet entry's clusterProfileRef into a reached spoke and its live facts.

The one path the program takes: read the ClusterProfile from the hub, require it
healthy, build the connection from it and the provider file, run the exec plugin once,
reach `/version` with that credential, then read what the plan needs with the same
credential. Every failure becomes a ResolutionError carrying the spoke, the operator's
reason name and the fix, so the caller can skip that spoke, keep the rest of the fleet
converging, and report all broken spokes at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubernetes.client import ApiClient

from core.errors import ProfileError, ResolutionError
from core.reasons import Reason

from .connection import SpokeConnection, build_connection, check_ready
from .credential import PluginCredential
from .exec_plugin import run_exec_plugin
from .hub import read_cluster_profile
from .probe import probe_spoke
from .provider_file import ProviderFile
from .redact import redact
from .spoke_facts import SpokeFacts, read_spoke_facts


@dataclass(frozen=True)
class ResolvedSpoke:
    """A spoke we reached: how, as whom (repr() hides the secrets), and what runs there."""

    connection: SpokeConnection
    credential: PluginCredential
    server_version: str
    facts: SpokeFacts


def _hub(
    namespace: str, name: str, hub: ApiClient | None, hub_error: Exception | None
) -> ApiClient:
    """The hub client, or why there is none as this spoke's ProfileError."""
    if hub is not None:
        return hub
    # The hub's own ProfileError already says what is wrong; do not repeat its reason.
    cause = hub_error.message if isinstance(hub_error, ProfileError) else hub_error
    raise ProfileError(
        Reason.CLUSTER_PROFILE_UNAVAILABLE,
        f"cannot reach the hub to read ClusterProfile {namespace}/{name}: "
        f"{cause or 'no hub client is configured'}",
    )


def resolve_spoke(
    spoke: str,
    namespace: str,
    name: str,
    *,
    hub: ApiClient | None,
    providers: ProviderFile | None,
    namespaces: Iterable[str],
    hub_error: Exception | None = None,
    plugin_timeout: float = 30.0,
) -> ResolvedSpoke:
    """Read, check and reach the spoke, then read its facts for `namespaces`.

    `hub_error` is what building the hub client raised (`hub` is then None), so one bad
    hub config becomes a per-spoke ClusterProfileUnavailable instead of a crash. Raises
    ResolutionError naming the spoke, the reason and the fix.
    """
    credential: PluginCredential | None = None
    try:
        # Without a provider file no spoke client can ever be built: say that first,
        # as the operator does, not hub trouble the user cannot act on yet.
        if providers is None:
            raise ProfileError(
                Reason.MULTICLUSTER_DISABLED,
                "no access-provider file is configured (knative-fleet:providerFile)",
            )
        profile = read_cluster_profile(_hub(namespace, name, hub, hub_error), namespace, name)
        check_ready(profile)
        connection = build_connection(profile, providers)
        credential = run_exec_plugin(connection, timeout=plugin_timeout)
        version = probe_spoke(connection, credential)
        facts = read_spoke_facts(connection, credential, namespaces)
    except ProfileError as exc:
        raise ResolutionError(spoke, exc.reason, exc.message) from None
    except Exception as exc:  # noqa: BLE001 - any other failure reading the spoke
        known = credential.secrets() if credential else ()
        message = redact(f"{type(exc).__name__}: {exc}", known)
        raise ResolutionError(spoke, Reason.REMOTE_CLIENT_CREATION_FAILED, message) from None
    return ResolvedSpoke(connection, credential, version, facts)
