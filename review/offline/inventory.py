"""An Inventory (access.inventory) that answers from a ClusterProfile snapshot and the
stack's last state, so the planner renders the fleet without the hub or any spoke.

- ClusterProfiles: the snapshot (profiles.py).
- A spoke's connection: its profile and the access-provider file, exactly as the
  program builds it, but no exec plugin is run: no credential exists offline. When the
  provider file is not readable here, the connection is built from the profile's first
  advertised provider and only its server and CA are known.
- A spoke's facts: the install namespaces the state has objects in (labels from the
  state's Namespace objects), the version this product runs there (its Deployments'
  version label in the state, else the `spokes` output), no RBAC rules (None: the access
  check is skipped). Facts the program reads live and the state cannot hold (owner
  records, operator CRs, ...) keep SpokeFacts' defaults: offline nothing is known of
  them, and the report says so.
- The server version: the `spokes` output's kubernetesVersion, else UNKNOWN_VERSION.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from access import ResolvedSpoke, SpokeConnection, SpokeFacts, build_connection, check_ready
from access.credential import PluginCredential
from access.provider_file import ProviderFile, load_provider_file
from core.errors import ProfileError, ProviderFileError, ResolutionError
from core.names import NAMESPACE, VERSION_LABEL
from core.reasons import Reason
from review.offline.profiles import ProfileSnapshot
from review.offline.state import LastState
from review.resources import NAMESPACE_TYPE, urn_name
from review.versions import parse

UNKNOWN_VERSION = "unknown (offline)"
DEPLOYMENT_TYPE = "kubernetes:apps/v1:Deployment"
_COMPONENT_OF = {ns: c for c, ns in NAMESPACE.items()}


def _object_namespace(spoke: str, res: Mapping[str, Any]) -> str | None:
    """The namespace of a spoke object from its resource name `<spoke>:<ns>/<name>`."""
    rest = urn_name(res["urn"]).removeprefix(f"{spoke}:")
    ns, sep, _ = rest.partition("/")
    return ns if sep else None


def _labels(res: Mapping[str, Any]) -> dict[str, str]:
    for key in ("outputs", "inputs"):
        labels = ((res.get(key) or {}).get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            return {str(k): str(v) for k, v in labels.items()}
    return {}


def facts_from_state(spoke: str, state: LastState, outputs: Mapping[str, Any],
                     install_namespaces: Iterable[str]) -> SpokeFacts:
    """What the program would read on the spoke, as far as the last run recorded it.
    Only the fields every SpokeFacts has are set: fields added later keep their
    defaults."""
    objects = state.spoke_objects(spoke)
    namespaces: dict[str, dict[str, str]] = {}
    installed: dict[str, str] = {}
    for ns in install_namespaces:
        own = next((r for r in objects if r.get("type") == NAMESPACE_TYPE
                    and urn_name(r["urn"]) == f"{spoke}:{ns}"), None)
        inside = [r for r in objects if _object_namespace(spoke, r) == ns]
        if own is not None:
            namespaces[ns] = _labels(own)
        elif inside:
            namespaces[ns] = {}  # objects there, the namespace not ours: someone else's
        versions = [v for r in inside if r.get("type") == DEPLOYMENT_TYPE
                    for v in [_labels(r).get(VERSION_LABEL)] if v and parse(v)]
        if versions:
            installed[ns] = min(versions, key=lambda v: parse(v) or (0, 0, 0)).lstrip("v")
        elif ns in namespaces and isinstance(outputs.get(_COMPONENT_OF.get(ns, "")), str):
            installed[ns] = str(outputs[_COMPONENT_OF[ns]])
    return SpokeFacts(namespaces=namespaces, installed=installed, rules=None)


def _fallback_connection(profile: Mapping[str, Any]) -> SpokeConnection:
    """Server and CA of the profile's first advertised provider, nothing to run."""
    status = profile.get("status") or {}
    entries = [*(status.get("accessProviders") or []), *(status.get("credentialProviders") or [])]
    if not entries:
        meta = profile.get("metadata") or {}
        raise ProfileError(Reason.ACCESS_PROVIDER_FAILED,
                           f"ClusterProfile {meta.get('namespace')}/{meta.get('name')} "
                           "advertises no access providers")
    entry = entries[0]
    cluster = entry.get("cluster") or {}
    return SpokeConnection(
        server=str(cluster.get("server") or ""),
        certificate_authority_data=cluster.get("certificate-authority-data"),
        proxy_url=cluster.get("proxy-url"), tls_server_name=cluster.get("tls-server-name"),
        insecure_skip_tls_verify=cluster.get("insecure-skip-tls-verify") is True,
        provider_name=str(entry.get("name") or ""), exec_api_version="", command="",
        args=(), env=(), provide_cluster_info=False, exec_extension=None)


class OfflineInventory:
    """Inventory of a snapshot and a state; contacts nothing (see the module docstring)."""

    def __init__(self, snapshot: ProfileSnapshot, state: LastState,
                 provider_file: str | None) -> None:
        self.snapshot = snapshot
        self.state = state
        self.provider_file = provider_file
        self.providers: ProviderFile | None = None
        self.provider_file_problem: str | None = None
        self.reached: dict[str, ResolvedSpoke] = {}

    def open(self) -> None:
        """Loads the provider file when it is readable here; a CI job without it still
        renders every spoke (the connection then holds the profile's server only)."""
        if not self.provider_file:
            return
        try:
            self.providers = load_provider_file(self.provider_file)
        except (ProviderFileError, OSError) as exc:
            self.provider_file_problem = f"{self.provider_file}: {exc}"

    def cluster_profiles(self, namespace: str) -> list[dict]:
        if namespace not in self.snapshot.namespaces:
            raise ProfileError(
                Reason.CLUSTER_PROFILE_UNAVAILABLE,
                f"the ClusterProfile snapshot does not list namespace {namespace!r} (it "
                f"lists: {', '.join(self.snapshot.namespaces) or 'none'}); take it again "
                "with `python -m review profiles --stack <stack>` after this change")
        return self.snapshot.in_namespace(namespace)

    def reach(self, spoke: str, namespace: str, name: str,
              install_namespaces: Iterable[str]) -> ResolvedSpoke:
        try:
            if not self.provider_file:
                raise ProfileError(
                    Reason.MULTICLUSTER_DISABLED,
                    "no access-provider file is configured (knative-fleet:providerFile)")
            profile = self.snapshot.get(namespace, name)
            if profile is None:
                where = ("" if namespace in self.snapshot.namespaces else
                         f" (the snapshot does not list namespace {namespace!r}: take it "
                         "again after this change)")
                raise ProfileError(Reason.CLUSTER_PROFILE_NOT_FOUND,
                                   f"ClusterProfile {namespace}/{name} not found on the "
                                   f"hub{where}")
            check_ready(profile)
            connection = (build_connection(profile, self.providers) if self.providers
                          else _fallback_connection(profile))
        except ProfileError as exc:
            raise ResolutionError(spoke, exc.reason, exc.message) from None
        outputs = self.state.spokes_output.get(spoke) or {}
        version = outputs.get("kubernetesVersion")
        facts = facts_from_state(spoke, self.state, outputs, install_namespaces)
        resolved = ResolvedSpoke(connection, PluginCredential(),
                                 version if isinstance(version, str) else UNKNOWN_VERSION,
                                 facts)
        self.reached[spoke] = resolved
        return resolved
