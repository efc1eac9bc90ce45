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

from access import (
    ProfileError,
    ProviderFile,
    Reason,
    ResolutionError,
    SpokeConnection,
    hub_api_client,
    load_provider_file,
    probe_spoke,
    read_cluster_profile,
    run_exec_plugin,
    to_kubeconfig,
)
from access.connection import build_connection, check_ready
from access.spoke_facts import read_spoke_facts
from components.spoke import Spoke, cluster_identifier
from config.fleet import FleetConfig, FleetEntry
from core.errors import ReleaseError, TransformError
from knative import plan as planning


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
    entry: FleetEntry, cfg: FleetConfig, hub: object, hub_error: Exception | None,
    providers: ProviderFile | None,
) -> SpokeResult:
    """SPEC section 1 for one entry, then the live facts its plan needs."""
    ref = entry.cluster_profile_ref
    try:
        if providers is None:
            raise ProfileError(Reason.MULTICLUSTER_DISABLED,
                               "no access-provider file is configured (knative-fleet:providerFile)")
        if hub is None:
            raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE,
                               f"cannot reach the hub to read ClusterProfile "
                               f"{ref.namespace}/{ref.name}: {hub_error}")
        profile = read_cluster_profile(hub, ref.namespace, ref.name)  # type: ignore[arg-type]
        check_ready(profile)
        conn = build_connection(profile, providers)
        token = run_exec_plugin(conn, timeout=cfg.plugin_timeout_seconds)
        version = probe_spoke(conn, token)
        names = [planning.NAMESPACE[c] for c in ("serving", "eventing")]
        facts = read_spoke_facts(conn, token, names)
    except ProfileError as exc:
        return _fail(entry, exc.reason, exc.message)
    except Exception as exc:  # noqa: BLE001 - any other read failure of the spoke
        return _fail(entry, Reason.REMOTE_CLIENT_CREATION_FAILED, f"{type(exc).__name__}: {exc}")
    try:
        plans = planning.plan_spoke(entry, cfg.release_base, facts.namespaces,
                                     facts.installed)
    except ReleaseError as exc:
        return _fail(entry, Reason.MANIFESTS_UNAVAILABLE, str(exc))
    except TransformError as exc:
        return _fail(entry, Reason.INVALID_SPEC, str(exc))
    return SpokeResult(entry, connection=conn, server_version=version, plans=plans)


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
