"""The wave gate's wait: a batch of spokes is healthy when every Deployment of the
install on each spoke has rolled out and is Available (what the Knative Operator waits
for, and what pulumi-kubernetes' Deployment await checks: generation observed, the new
ReplicaSet fully available). Polled until the wave's timeout; more failing spokes than
`maxFailures` (unreachable ones included) is an error naming them, so nothing that
depends on the gate starts."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kubernetes import client

from access.spoke_client import spoke_client

if TYPE_CHECKING:
    from fleet.plan import BatchStep, SpokeInstall, WaveStep

POLL_S = 2.0

# spoke name, its props, plugin timeout -> live Deployments by `namespace/name` (None: absent)
Reader = Callable[[str, dict[str, Any], float], dict[str, dict | None]]


def gate_inputs(step: WaveStep, batch: BatchStep,
                installs: Mapping[str, SpokeInstall | None], changes: Any) -> dict[str, Any]:
    """The inputs of a batch's wave gate, what `await_wave` reads: the one definition
    the registrar (components.waves) and the offline review both use. `installs`: the
    batch's spokes' installs; `changes`: the digest of the batch's objects, as each side
    knows it."""
    spokes = {name: {"connection": i.connection, "deployments": list(i.deployments)}
              for name, i in installs.items() if i is not None}
    first = next(iter(installs.values()), None)
    return {"wave": step.name, "spokes": spokes, "unreachable": dict(batch.unreachable),
            "changes": changes, "timeoutSeconds": step.timeout_s,
            "maxFailures": step.max_failures, "later": list(step.later),
            "pluginTimeoutSeconds": first.plugin_timeout_s if first else None}


def _condition(obj: Mapping, kind: str) -> Mapping:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return {}


def _said(cond: Mapping, kind: str) -> str:
    if not cond:
        return f"no {kind} condition yet"
    text = f"{kind}={cond.get('status')}"
    if cond.get("reason"):
        text += f" ({cond['reason']}: {cond.get('message', '')})"
    return text


def deployment_problem(obj: Mapping | None, name: str) -> str | None:
    """None when the Deployment has rolled out and is Available, else why not."""
    if obj is None:
        return f"Deployment {name} does not exist"
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    want = (obj.get("spec") or {}).get("replicas", 1)
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return f"Deployment {name}: its controller has not seen the latest change yet"
    available = _condition(obj, "Available")
    if available.get("status") != "True":
        return f"Deployment {name}: {_said(available, 'Available')}"
    progressing = _condition(obj, "Progressing")
    if progressing and progressing.get("reason") != "NewReplicaSetAvailable":
        return (f"Deployment {name}: rollout not complete, {_said(progressing, 'Progressing')}, "
                f"{status.get('updatedReplicas', 0)} updated and "
                f"{status.get('availableReplicas', 0)} available of {want}")
    if status.get("updatedReplicas", 0) < want or status.get("availableReplicas", 0) < want:
        return (f"Deployment {name}: {status.get('updatedReplicas', 0)} updated and "
                f"{status.get('availableReplicas', 0)} available of {want} replicas")
    return None


def spoke_problems(live: Mapping[str, Mapping | None], expected: list[str]) -> list[str]:
    """The problems of every Deployment the install has on a spoke (`namespace/name`)."""
    return [p for name in expected if (p := deployment_problem(live.get(name), name))]


def wave_failures(problems: Mapping[str, list[str]],
                  unreachable: Mapping[str, str]) -> dict[str, str]:
    """Spoke -> why it fails the wave: unreachable, or its Deployments' problems."""
    failures = {spoke: f"unreachable: {why}" for spoke, why in unreachable.items()}
    failures.update({spoke: "; ".join(p) for spoke, p in problems.items() if p})
    return dict(sorted(failures.items()))


def wave_failed_message(wave: str, failures: Mapping[str, str], timeout_s: float,
                        max_failures: int, later: list[str]) -> str:
    """What a failed wave tells the user: each failing spoke and why, what was left as
    it was, and the way on."""
    lines = "\n".join(f"  spoke {s!r}: {why}" for s, why in failures.items())
    stopped = (f"Later waves were not started ({', '.join(later)}): their spokes' objects, "
               "in the clusters and in the state, are as they were."
               if later else "It was the last wave.")
    return (f"wave {wave!r} is not healthy: {len(failures)} spoke(s) failed within "
            f"{timeout_s:.0f}s, more than its maxFailures ({max_failures}):\n{lines}\n"
            f"{stopped} Fix: correct or revert the change in the stack config and run "
            "`pulumi up` again; see README 'Groups and waves'.")


class DeploymentReader:
    """Reads each spoke's Deployments with one client per spoke for the whole wait: the
    exec plugin runs once per spoke, not once per poll. A failed read drops that spoke's
    client, so the next poll starts with a fresh credential."""

    def __init__(self) -> None:
        self._clients: dict[str, tuple[contextlib.ExitStack, Any]] = {}

    def __call__(self, name: str, spoke: dict[str, Any],
                 plugin_timeout_s: float) -> dict[str, dict | None]:
        if name not in self._clients:
            stack = contextlib.ExitStack()
            api = stack.enter_context(spoke_client(spoke["connection"], plugin_timeout_s))
            self._clients[name] = (stack, api)
        try:
            return _read(self._clients[name][1], spoke["deployments"])
        except Exception:
            self._clients.pop(name)[0].close()
            raise

    def close(self) -> None:
        for stack, _ in self._clients.values():
            stack.close()
        self._clients.clear()


def _read(api: Any, deployments: list[str]) -> dict[str, dict | None]:
    """The Deployments the install expects on one spoke, as the API returns them."""
    live: dict[str, dict | None] = {name: None for name in deployments}
    apps = client.AppsV1Api(api)
    for namespace in sorted({name.split("/", 1)[0] for name in deployments}):
        found = api.sanitize_for_serialization(
            apps.list_namespaced_deployment(namespace, _request_timeout=15))
        for obj in found.get("items") or []:
            key = f"{namespace}/{obj['metadata']['name']}"
            if key in live:
                live[key] = obj
    return live


def _poll(spokes: dict[str, dict[str, Any]], problems: dict[str, list[str]], read: Reader,
          plugin_timeout: float, deadline: float, clock: Callable[[], float],
          sleep: Callable[[float], None]) -> None:
    """Reads every spoke not yet healthy until none is left or the deadline passes."""
    while True:
        for name in [n for n, p in problems.items() if p]:
            try:
                live = read(name, spokes[name], plugin_timeout)
                problems[name] = spoke_problems(live, list(spokes[name]["deployments"]))
            except Exception as exc:  # noqa: BLE001 - reported as this spoke's failure
                problems[name] = [f"cannot read its Deployments: {type(exc).__name__}: {exc}"]
        if not any(problems.values()) or clock() >= deadline:
            return
        sleep(POLL_S)


def await_wave(props: dict[str, Any], read: Reader | None = None,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Polls every spoke until all are healthy or the timeout passes; returns the
    verdict, raises when more spokes fail than the wave allows."""
    spokes: dict[str, dict[str, Any]] = props.get("spokes") or {}
    unreachable: dict[str, str] = props.get("unreachable") or {}
    timeout = float(props["timeoutSeconds"])
    plugin_timeout = float(props.get("pluginTimeoutSeconds") or 30)
    problems: dict[str, list[str]] = {name: ["not checked yet"] for name in spokes}
    reader = DeploymentReader()
    try:
        _poll(spokes, problems, read or reader, plugin_timeout, clock() + timeout, clock,
              sleep)
    finally:
        reader.close()
    failures = wave_failures(problems, unreachable)
    if len(failures) > int(props.get("maxFailures") or 0):
        raise RuntimeError(wave_failed_message(
            props["wave"], failures, timeout, int(props.get("maxFailures") or 0),
            list(props.get("later") or [])))
    return {"healthy": {name: not p for name, p in problems.items()}, "failures": failures}
