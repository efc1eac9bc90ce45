"""The hub's inventory as the planner reads it: ClusterProfiles to select from, and each
spoke they lead to, reached (access.resolve).

One object per run holds the hub client (or why there is none) and the provider file,
so the planner asks for profiles and spokes without knowing how they are read, and a
test or a benchmark hands the planner an inventory of its own instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from kubernetes.client import ApiClient

from config.fleet import FleetConfig
from core.errors import ProfileError
from core.reasons import Reason

from .hub import hub_api_client, list_cluster_profiles
from .provider_file import ProviderFile, load_provider_file
from .resolve import ResolvedSpoke, resolve_spoke


class Inventory(Protocol):
    """What the planner reads from the hub and the spokes."""

    def cluster_profiles(self, namespace: str) -> list[dict]:
        """Every ClusterProfile of an inventory namespace; raises ProfileError."""
        ...

    def open(self) -> None:
        """Loads what reaching a spoke needs (the access-provider file); raises
        ConfigError when the user's file is unusable."""
        ...

    def reach(self, spoke: str, namespace: str, name: str,
              install_namespaces: Iterable[str]) -> ResolvedSpoke:
        """The spoke behind ClusterProfile namespace/name, reached, with its facts for
        `install_namespaces`; raises ResolutionError naming the spoke."""
        ...


class HubInventory:
    """The inventory of a real hub: its kubeconfig, the access-provider file and the exec
    plugin's timeout, from the stack config."""

    @classmethod
    def of(cls, cfg: FleetConfig) -> HubInventory:
        """The inventory the stack config names."""
        return cls(cfg.hub.kubeconfig, cfg.hub.context, cfg.provider_file,
                   cfg.plugin_timeout_seconds)

    def __init__(self, kubeconfig: str | None, context: str | None, provider_file: str | None,
                 plugin_timeout_s: float) -> None:
        try:
            self.hub: ApiClient | None = hub_api_client(kubeconfig, context)
            self.hub_error: Exception | None = None
        except Exception as exc:  # noqa: BLE001 - reported per spoke as ClusterProfileUnavailable
            self.hub, self.hub_error = None, exc
        self.provider_file = provider_file
        self.providers: ProviderFile | None = None
        self.plugin_timeout_s = plugin_timeout_s

    def open(self) -> None:
        if self.provider_file:
            self.providers = load_provider_file(self.provider_file)

    def cluster_profiles(self, namespace: str) -> list[dict]:
        if self.hub is None:
            raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE,
                               f"cannot load the hub kubeconfig: {self.hub_error}")
        return list_cluster_profiles(self.hub, namespace)

    def reach(self, spoke: str, namespace: str, name: str,
              install_namespaces: Iterable[str]) -> ResolvedSpoke:
        return resolve_spoke(
            spoke, namespace, name, hub=self.hub, hub_error=self.hub_error,
            providers=self.providers, namespaces=install_namespaces,
            plugin_timeout=self.plugin_timeout_s)
