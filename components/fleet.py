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

import hashlib
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
    to_kubeconfig,
)
from components.membership import FleetMembership
from components.spoke import Spoke, cluster_identifier
from components.spoke_access import connection_props
from components.wave_gate import WaveGate
from config.fleet import FleetConfig, FleetEntry
from core.errors import ReleaseError, SelectionError, TransformError
from knative import plan as planning
from rollout.waves import WavePlan, assign_waves
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


def _changes(resources: list[pulumi.Resource]) -> pulumi.Output[str]:
    """A digest of what the resources hold after this run: it changes exactly when the
    run created or updated one of them (their uid and resourceVersion)."""
    metas = [r.metadata for r in resources]  # type: ignore[attr-defined]

    def digest(values: list) -> str:
        h = hashlib.sha256()
        for meta in values:
            meta = meta or {}
            h.update(f"{meta.get('uid')}/{meta.get('resourceVersion')};".encode())
        return h.hexdigest()

    return pulumi.Output.all(*metas).apply(digest)


@dataclass
class WaveRun:
    """What one wave did in this run, for the stack outputs and the failure."""

    plan: WavePlan
    spokes: dict[str, Spoke] = field(default_factory=dict)
    gates: list[WaveGate] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    started: bool = True

    def output(self) -> dict[str, object]:
        out: dict[str, object] = {"spokes": [s.entry.name for s in self.plan.spokes]}
        if not self.started:
            out["status"] = "NotStarted"
        elif self.plan.gated and len(self.unreachable) > self.plan.max_failures:
            out["status"] = "Stopped"
        else:
            done = [g.id for g in self.gates] + [s.ready for s in self.spokes.values()]
            out["status"] = pulumi.Output.all(*done).apply(lambda _: "Completed")
        return out


def _register(result: SpokeResult, cfg: FleetConfig, after: list[pulumi.Resource],
              gated: bool) -> Spoke:
    entry = result.entry
    assert result.connection is not None
    return Spoke(
        entry.name,
        kubeconfig=to_kubeconfig(result.connection, entry.name),
        identifier=cluster_identifier(entry.cluster_profile_ref.namespace,
                                      entry.cluster_profile_ref.name),
        plans=result.plans,
        connection=result.connection,
        plugin_timeout_s=cfg.plugin_timeout_seconds,
        after=after,
        gated=gated,
    )


def run_waves(cfg: FleetConfig, waves: list[WavePlan], results: dict[str, SpokeResult],
              first: list[pulumi.Resource]) -> list[WaveRun]:
    """Registers the waves in order, each batch after the gate of the one before; a
    wave with more unreachable spokes than it allows stops the rollout there."""
    runs = [WaveRun(w) for w in waves]
    after = first
    stopped = False
    for i, run in enumerate(runs):
        if stopped:
            run.started = False
            continue
        wave = run.plan
        run.unreachable = {s.entry.name: str(results[s.entry.name].error)
                           for s in wave.spokes if results[s.entry.name].error}
        # The wave's reachable spokes are updated either way; too many unreachable ones
        # stop the rollout after it (the implicit wave of a stack without waves has
        # nothing after it).
        stopped = wave.gated and len(run.unreachable) > wave.max_failures
        later = [w.name for w in waves[i + 1:]]
        batches = wave.batches()
        for b, batch in enumerate(batches):
            live = [results[s.entry.name] for s in batch if not results[s.entry.name].error]
            spokes = {r.entry.name: _register(r, cfg, after, wave.gated) for r in live}
            run.spokes.update(spokes)
            if not wave.gated or not spokes:
                continue
            gate = WaveGate(
                f"wave-{wave.name}" + (f"-{b + 1}" if len(batches) > 1 else ""),
                wave=wave.name,
                spokes={name: {"connection": connection_props(results[name].connection),
                               "deployments": _deployment_names(results[name].plans)}
                        for name in spokes},
                # A stopped wave's unreachable spokes fail the run already: its gate
                # checks the health of the others.
                unreachable={} if stopped else {
                    n: u for n, u in run.unreachable.items()
                    if n in {s.entry.name for s in batch}},
                changes=_changes([r for s in spokes.values() for r in s.registered]),
                timeout_s=wave.timeout_s, max_failures=wave.max_failures, later=later,
                plugin_timeout_s=cfg.plugin_timeout_seconds,
                opts=pulumi.ResourceOptions(
                    depends_on=[r for s in spokes.values() for r in s.registered]))
            run.gates.append(gate)
            for name, spoke in spokes.items():
                spoke.ready = gate.healthy.apply(
                    lambda healthy, n=name: bool((healthy or {}).get(n)))
            after = [gate]
    return runs


def _deployment_names(plans: list[planning.InstallPlan]) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}"
                  for p in plans for s in p.stages if s.name == "deployments"
                  for o in s.objects)


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
    stop = next((r for r in runs if r.started and r.plan.gated
                 and len(r.unreachable) > r.plan.max_failures), None)
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
