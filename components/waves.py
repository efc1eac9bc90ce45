"""The rollout as Pulumi resources: each wave's spokes registered after the gate of the
wave (or batch) before, a gate after each batch (components.wave_gate), and what each
wave did in this run, for the stack outputs and the run's failure."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pulumi

from access import to_kubeconfig
from components.spoke import Spoke, cluster_identifier
from components.spoke_access import connection_props
from components.wave_gate import WaveGate
from config.fleet import FleetConfig
from knative import plan as planning
from rollout.waves import WavePlan

if TYPE_CHECKING:
    from components.fleet import SpokeResult


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

    @property
    def stops_rollout(self) -> bool:
        """More unreachable spokes than the wave allows: the waves after it do not start
        (the implicit wave of a stack without waves has none after it)."""
        return self.plan.gated and len(self.unreachable) > self.plan.max_failures

    def output(self) -> dict[str, object]:
        out: dict[str, object] = {"spokes": [s.entry.name for s in self.plan.spokes]}
        if not self.started:
            out["status"] = "NotStarted"
        elif self.stops_rollout:
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
        # The wave's reachable spokes are updated either way.
        stopped = run.stops_rollout
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
