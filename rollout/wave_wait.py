"""Waiting for a wave batch to be healthy: every Deployment of the install on each spoke
rolled out and Available (rollout.health), polled until the wave's timeout; more failing
spokes than `maxFailures` (unreachable ones included) is an error naming them. The wave
gate (components.wave_gate) runs it when a run changed something in its batch."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client

from access.spoke_client import spoke_client
from rollout.health import spoke_problems, wave_failed_message, wave_failures

POLL_S = 2.0

# spoke name, its props, plugin timeout -> live Deployments by `namespace/name` (None: absent)
Reader = Callable[[str, dict[str, Any], float], dict[str, dict | None]]


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
