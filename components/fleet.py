"""The whole fleet in one program: select the spokes (explicit entries and groups,
targeting.selection), order them in waves (rollout.waves), resolve every spoke,
install on the ones that resolve, wave after healthy wave (components.wave_gate),
and end the run failed, naming every spoke that did not resolve, without touching it.

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
    REMEDIATION,
    ProfileError,
    ProviderFile,
    Reason,
    ResolutionError,
    SpokeConnection,
    hub_api_client,
    list_cluster_profiles,
    load_provider_file,
    resolve_spoke,
)
from components.membership import FleetMembership
from components.spoke import Spoke
from components.waves import WaveRun, run_waves
from config.fleet import FleetConfig, FleetEntry
from core.errors import ReleaseError, SelectionError, TransformError
from knative import plan as planning
from rollout.waves import assign_waves
from targeting.deselected import membership_record
from targeting.selection import Profile, SelectedSpoke, select_spokes

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


def connect_hub(cfg: FleetConfig) -> tuple[ApiClient | None, Exception | None]:
    try:
        return hub_api_client(cfg.hub.kubeconfig, cfg.hub.context), None
    except Exception as exc:  # noqa: BLE001 - reported per spoke as ClusterProfileUnavailable
        return None, exc


def list_profiles(cfg: FleetConfig, hub: ApiClient | None,
                  hub_error: Exception | None) -> list[Profile]:
    """The ClusterProfiles groups select from, and (for waves) the explicit entries'
    labels; nothing is listed for a stack of explicit entries without waves. A hub
    that cannot be listed fails the run before anything is registered."""
    namespaces = {g.namespace for g in cfg.groups}
    if cfg.rollout is not None:
        namespaces |= {e.cluster_profile_ref.namespace for e in cfg.fleet}
    if not namespaces:
        return []
    try:
        if hub is None:
            raise ProfileError(Reason.CLUSTER_PROFILE_UNAVAILABLE,
                               f"cannot load the hub kubeconfig: {hub_error}")
        return [Profile.from_object(o) for ns in sorted(namespaces)
                for o in list_cluster_profiles(hub, ns)]
    except ProfileError as exc:
        raise pulumi.RunError(
            f"cannot select the fleet's spokes: {exc}. Nothing was changed. "
            f"Fix: {REMEDIATION[exc.reason]}") from None


def resolve_fleet(cfg: FleetConfig, entries: list[FleetEntry], hub: ApiClient | None,
                  hub_error: Exception | None) -> list[SpokeResult]:
    providers = load_provider_file(cfg.provider_file) if cfg.provider_file else None
    if not entries:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(entries))) as pool:
        return list(pool.map(
            lambda e: resolve_entry(e, cfg, hub, hub_error, providers), entries))


def condition(result: SpokeResult) -> dict[str, str]:
    if result.error:
        return {"status": "False", "reason": str(result.error.reason),
                "message": result.error.message}
    return {"status": "True", "reason": "Resolved",
            "message": f"reached {result.connection.server} ({result.server_version})"}  # type: ignore[union-attr]


def deploy(cfg: FleetConfig) -> dict[str, Spoke]:
    """Registers every resolvable spoke, wave by wave; raises RunError at the end if
    any spoke was not resolved or a wave stopped the rollout."""
    hub, hub_error = connect_hub(cfg)
    profiles = list_profiles(cfg, hub, hub_error)
    try:
        selected = select_spokes(cfg, profiles)
        waves = assign_waves(cfg, selected)
    except SelectionError as exc:
        raise pulumi.RunError(str(exc)) from None
    membership = FleetMembership(membership_record(selected, cfg.groups, profiles))
    results = {r.entry.name: r for r in resolve_fleet(
        cfg, [s.entry for s in selected], hub, hub_error)}
    runs = run_waves(cfg, waves, results, [membership])

    spokes = {name: spoke for run in runs for name, spoke in run.spokes.items()}
    outputs: dict[str, object] = {}
    for run in runs:
        for selected_spoke in run.plan.spokes:
            outputs[selected_spoke.entry.name] = _spoke_output(
                results[selected_spoke.entry.name], selected_spoke, run,
                spokes.get(selected_spoke.entry.name), shown_wave=cfg.rollout is not None)
    pulumi.export("ring", cfg.ring)
    pulumi.export("spokes", outputs)
    if cfg.rollout is not None:
        pulumi.export("waves", {run.plan.name: run.output() for run in runs})
    _fail_if_incomplete(results, runs)
    return spokes


def _spoke_output(result: SpokeResult, selected: SelectedSpoke, run: WaveRun,
                  spoke: Spoke | None, shown_wave: bool) -> dict[str, object]:
    entry = result.entry
    out: dict[str, object] = {
        "clusterProfile": f"{entry.cluster_profile_ref.namespace}/"
                          f"{entry.cluster_profile_ref.name}",
        "targetClusterResolved": condition(result),
    }
    if selected.group:
        out["group"] = selected.group
    if shown_wave:
        out["wave"] = run.plan.name
    if spoke is not None and result.connection is not None:
        if shown_wave:
            pulumi.log.info(f"wave {run.plan.name!r} ({run.plan.index + 1} of the rollout)",
                            resource=spoke)
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
    return out


def _fail_if_incomplete(results: dict[str, SpokeResult], runs: list[WaveRun]) -> None:
    failed = [r.error for r in results.values() if r.error is not None]
    for err in failed:
        pulumi.log.error(str(err))
    problems = []
    if failed:
        names = ", ".join(f"{e.spoke} ({e.reason})" for e in failed)
        problems.append(
            f"{len(failed)} of {len(results)} spokes could not be resolved: {names}. "
            "Their resources were left untouched; the other spokes were updated.")
    stop = next((r for r in runs if r.started and r.stops_rollout), None)
    if stop is not None:
        later = [r for r in runs if not r.started]
        untouched = ", ".join(s.entry.name for r in later for s in r.plan.spokes) or "none"
        problems.append(
            f"wave {stop.plan.name!r} stopped the rollout: {len(stop.unreachable)} of its "
            f"spokes are unreachable, more than its maxFailures ({stop.plan.max_failures}): "
            f"{', '.join(stop.unreachable)}. Later waves were not started "
            f"({', '.join(r.plan.name for r in later) or 'none'}; spokes: {untouched}); "
            "their objects are as they were.")
    if problems:
        raise pulumi.RunError(" ".join(problems))
