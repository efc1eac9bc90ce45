"""The health gate between waves: the next wave (or batch) of spokes starts only when
this one is healthy.

One dynamic resource per wave batch depends on every resource of the batch's spokes;
everything of the next batch depends on it. Its `changes` input is a digest of those
resources' applied versions, so it runs exactly when a run changed something in the
batch (and `pulumi preview` shows it as an update then). When it runs, it waits up to
the wave's timeout for every Deployment of the install on each spoke to be rolled out
and Available (`rollout.health`); more failing spokes than `maxFailures` (unreachable
ones included) fail it, so Pulumi starts nothing that depends on it: later waves keep
their objects, in the clusters and in the state, as they were.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pulumi
from kubernetes import client
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

from components.spoke_access import spoke_client
from rollout.health import spoke_problems, wave_failed_message, wave_failures

POLL_S = 2.0

# spoke name, its props -> live Deployments by `namespace/name` (None: not there)
Reader = Callable[[str, dict[str, Any], float], dict[str, dict | None]]


def read_deployments(_spoke: str, spoke: dict[str, Any],
                     plugin_timeout_s: float) -> dict[str, dict | None]:
    """The spoke's Deployments the install expects, as the API returns them."""
    live: dict[str, dict | None] = {name: None for name in spoke["deployments"]}
    namespaces = sorted({name.split("/", 1)[0] for name in spoke["deployments"]})
    with spoke_client(spoke["connection"], plugin_timeout_s) as api:
        apps = client.AppsV1Api(api)
        for namespace in namespaces:
            found = api.sanitize_for_serialization(
                apps.list_namespaced_deployment(namespace, _request_timeout=15))
            for obj in found.get("items") or []:
                key = f"{namespace}/{obj['metadata']['name']}"
                if key in live:
                    live[key] = obj
    return live


def await_wave(props: dict[str, Any], read: Reader = read_deployments,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Polls every spoke until all are healthy or the timeout passes; returns the
    verdict, raises when more spokes fail than the wave allows."""
    spokes: dict[str, dict[str, Any]] = props.get("spokes") or {}
    unreachable: dict[str, str] = props.get("unreachable") or {}
    timeout = float(props["timeoutSeconds"])
    plugin_timeout = float(props.get("pluginTimeoutSeconds") or 30)
    deadline = clock() + timeout
    problems: dict[str, list[str]] = {name: ["not checked yet"] for name in spokes}
    while True:
        for name in [n for n, p in problems.items() if p]:
            try:
                live = read(name, spokes[name], plugin_timeout)
                problems[name] = spoke_problems(live, list(spokes[name]["deployments"]))
            except Exception as exc:  # noqa: BLE001 - reported as this spoke's failure
                problems[name] = [f"cannot read its Deployments: {type(exc).__name__}: {exc}"]
        if not any(problems.values()) or clock() >= deadline:
            break
        sleep(POLL_S)
    failures = wave_failures(problems, unreachable)
    if len(failures) > int(props.get("maxFailures") or 0):
        raise RuntimeError(wave_failed_message(
            props["wave"], failures, timeout, int(props.get("maxFailures") or 0),
            list(props.get("later") or [])))
    return {"healthy": {name: not p for name, p in problems.items()}, "failures": failures}


class _Provider(ResourceProvider):
    KEYS = ("wave", "spokes", "unreachable", "changes", "timeoutSeconds", "maxFailures")

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=str(props["wave"]), outs={**props, **await_wave(props)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [k for k in self.KEYS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs={**news, **await_wave(news)})


class WaveGate(pulumi.dynamic.Resource, module="knative-fleet", name="WaveGate"):
    """Succeeds when the batch is healthy enough (see the module docstring)."""

    healthy: pulumi.Output[dict]

    def __init__(self, name: str, *, wave: str, spokes: dict[str, Any],
                 unreachable: dict[str, str], changes: pulumi.Input[str], timeout_s: int,
                 max_failures: int, later: list[str], plugin_timeout_s: float,
                 opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            _Provider(), name,
            {"wave": wave, "spokes": pulumi.Output.secret(spokes), "unreachable": unreachable,
             "changes": changes, "timeoutSeconds": timeout_s, "maxFailures": max_failures,
             "later": later, "pluginTimeoutSeconds": plugin_timeout_s,
             "healthy": None, "failures": None},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["spokes"])))
