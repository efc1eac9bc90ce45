"""Resolve fleet spokes through the Cluster Inventory API (ClusterProfile + exec plugin)."""

from core.errors import ProfileError, ResolutionError
from core.reasons import REMEDIATION, Reason

from .connection import SpokeConnection, build_connection, check_ready, to_kubeconfig
from .credential import PluginCredential
from .exec_plugin import run_exec_plugin
from .hub import hub_api_client, list_cluster_profiles, read_cluster_profile
from .probe import probe_spoke
from .provider_file import (
    AccessProvider,
    ExecConfig,
    ExecEnvVar,
    ProviderFile,
    ProviderFileError,
    load_provider_file,
)
from .resolve import ResolvedSpoke, resolve_spoke
from .spoke_facts import SpokeFacts, read_spoke_facts, spoke_api_client

__all__ = [
    "REMEDIATION",
    "AccessProvider",
    "ExecConfig",
    "ExecEnvVar",
    "PluginCredential",
    "ProfileError",
    "ProviderFile",
    "ProviderFileError",
    "Reason",
    "ResolutionError",
    "ResolvedSpoke",
    "SpokeConnection",
    "SpokeFacts",
    "build_connection",
    "check_ready",
    "hub_api_client",
    "list_cluster_profiles",
    "load_provider_file",
    "probe_spoke",
    "read_cluster_profile",
    "read_spoke_facts",
    "resolve_spoke",
    "run_exec_plugin",
    "spoke_api_client",
    "to_kubeconfig",
]
