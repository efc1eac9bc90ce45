"""The whole fleet in one program: resolve every spoke, install on the ones
that resolve, and end the run failed, naming every spoke that did not, without
touching it.

Why the run must *fail* for a broken spoke: Pulumi deletes resources a
successful program did not register. Raising after the healthy spokes are
registered lets their changes land (the SDK waits for outstanding
registrations) while the engine skips every delete, so a spoke that cannot be
reached keeps all of its objects in the cluster and in the state.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pulumi
from kubernetes.client import ApiClient

from access import (
    ProviderFile,
    Reason,
    ResolutionError,
    SpokeConnection,
    hub_api_client,
    load_provider_file,
    resolve_spoke,
    to_kubeconfig,
)
from components.spoke import Spoke, cluster_identifier
from config.fleet import FleetConfig, FleetEntry
from core.errors import ReleaseError, TransformError
from knative import plan as planning

# The namespaces the plan needs facts about: where Knative installs.
INSTALL_NAMESPACES = tuple(planning.NAMESPACE[c] for c in ("serving", "eventing"))


@dataclass
class SpokeResult:
    entry: FleetEntry
    connection: SpokeConnection | None = None
    server_version: str | None = None
    plans: list[planning.InstallPlan] = field(default_factory=list)
    error: ResolutionError | None = None


def _fail(entry: FleetEntry, reason: Reason, message: str) -> SpokeResult:
    return SpokeResult(entry, error=ResolutionError(entry.name, reason, message))


def resolve_entry(
    entry: FleetEntry, cfg: FleetConfig, hub: ApiClient | None, hub_error: Exception | None,
    providers: ProviderFile | None,
) -> SpokeResult:
    """Resolve one entry's spoke (access.resolve_spoke), then plan its install from the
    facts read there; any failure is kept in the result, never raised."""
    ref = entry.cluster_profile_ref
    try:
        resolved = resolve_spoke(
            entry.name, ref.namespace, ref.name, hub=hub, hub_error=hub_error,
            providers=providers, namespaces=INSTALL_NAMESPACES,
            plugin_timeout=cfg.plugin_timeout_seconds)
    except ResolutionError as exc:
        return SpokeResult(entry, error=exc)
    facts = resolved.facts
    try:
        plans = planning.plan_spoke(entry.serving, entry.eventing, cfg.release_base,
                                     facts.namespaces, facts.installed)
    except ReleaseError as exc:
        return _fail(entry, Reason.MANIFESTS_UNAVAILABLE, str(exc))
    except TransformError as exc:
        return _fail(entry, Reason.INVALID_SPEC, str(exc))
    return SpokeResult(entry, connection=resolved.connection,
                       server_version=resolved.server_version, plans=plans)


def resolve_fleet(cfg: FleetConfig) -> list[SpokeResult]:
    providers = load_provider_file(cfg.provider_file) if cfg.provider_file else None
    hub, hub_error = None, None
    try:
        hub = hub_api_client(cfg.hub.kubeconfig, cfg.hub.context)
    except Exception as exc:  # noqa: BLE001 - reported per spoke as ClusterProfileUnavailable
        hub_error = exc
    if not cfg.fleet:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(cfg.fleet))) as pool:
        return list(pool.map(
            lambda e: resolve_entry(e, cfg, hub, hub_error, providers), cfg.fleet))


def condition(result: SpokeResult) -> dict[str, str]:
    if result.error:
        return {"status": "False", "reason": str(result.error.reason),
                "message": result.error.message}
    return {"status": "True", "reason": "Resolved",
            "message": f"reached {result.connection.server} ({result.server_version})"}  # type: ignore[union-attr]


def deploy(cfg: FleetConfig) -> dict[str, Spoke]:
    """Registers every resolvable spoke; raises RunError at the end if any was not."""
    results = resolve_fleet(cfg)
    spokes: dict[str, Spoke] = {}
    outputs: dict[str, object] = {}
    for result in results:
        entry = result.entry
        out: dict[str, object] = {
            "clusterProfile": f"{entry.cluster_profile_ref.namespace}/"
                              f"{entry.cluster_profile_ref.name}",
            "targetClusterResolved": condition(result),
        }
        if result.error is None and result.connection is not None:
            spoke = Spoke(
                entry.name,
                kubeconfig=to_kubeconfig(result.connection, entry.name),
                identifier=cluster_identifier(entry.cluster_profile_ref.namespace,
                                              entry.cluster_profile_ref.name),
                plans=result.plans,
                connection=result.connection,
                plugin_timeout_s=cfg.plugin_timeout_seconds,
            )
            spokes[entry.name] = spoke
            out.update({
                "server": result.connection.server,
                "kubernetesVersion": result.server_version,
                "serving": next((p.version for p in result.plans if p.component == "serving"),
                                None),
                "eventing": next((p.version for p in result.plans
                                  if p.component == "eventing"), None),
                "ready": spoke.ready,
            })
        else:
            out["ready"] = False
        outputs[entry.name] = out
    pulumi.export("spokes", outputs)
    failed = [r.error for r in results if r.error is not None]
    for err in failed:
        pulumi.log.error(str(err))
    if failed:
        names = ", ".join(f"{e.spoke} ({e.reason})" for e in failed)
        raise pulumi.RunError(
            f"{len(failed)} of {len(results)} spokes could not be resolved: {names}. "
            "Their resources were left untouched; the other spokes were updated.")
    return spokes
