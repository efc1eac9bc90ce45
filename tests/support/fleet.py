"""What the end-to-end tests ask of a fleet stack and its spokes beyond driving it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kubernetes import client

from core.settings import Binaries
from lab.fleet import FleetStack
from lab.handle import Lab
from review.fields import lookup, parse_path
from review.offline.state import SECRET_SIG

# The fleet's own resources, not a spoke's: its membership and the wave gates.
FLEET_TYPES = ("knative-fleet:FleetMembership", "knative-fleet:WaveGate")
# A finalizer of the tests' own: the object it is on stays Terminating until a test takes
# it off (an anchor, a CRD, being deleted).
HELD = "knative-fleet.test/held"
# The patch that takes HELD off by name, and only it. A strategic-merge patch merges its
# `finalizers` into the live list (patchStrategy: merge): writing back the list without
# HELD would keep HELD, and the object would stay Terminating for good.
RELEASE_HELD = {"metadata": {"$deleteFromPrimitiveList/finalizers": [HELD]}}


def changed_spokes(steps: list[dict]) -> dict[str, set[str]]:
    """{spoke name: {ops}} for every step that is not `same` (fleet-level resources aside:
    the membership changes with the set of spokes, a gate with its wave)."""
    out: dict[str, set[str]] = {}
    for step in steps:
        if step.get("op") in ("same", "read") or any(t in step["urn"] for t in FLEET_TYPES):
            continue
        name = step["urn"].rsplit("::", 1)[-1]
        spoke = name.split(":", 1)[0]
        out.setdefault(spoke, set()).add(step["op"])
    return out


def step_changes(steps: list[dict]) -> list[tuple[str, str, list]]:
    """(op, urn, changes) of every preview step that is not `same`. The Kubernetes
    provider reports its changes in `detailedDiff` only (`diffReasons` stays empty), so
    both are read; an update names, per path, what the state holds (the last apply's
    outputs, which the provider diffs against) and what the program now asks for."""
    out = []
    for s in steps:
        if s.get("op") in ("same", "read"):
            continue
        paths = sorted({*(s.get("diffReasons") or []), *(s.get("detailedDiff") or {})})
        if s["op"] == "update" and ":Secret::" not in s["urn"]:
            held = (s.get("oldState") or {}).get("outputs") or {}
            wanted = (s.get("newState") or {}).get("inputs") or {}
            paths = [(p, lookup(held, parse_path(p)), lookup(wanted, parse_path(p)))
                     for p in paths[:5]]
        out.append((s["op"], s["urn"].rsplit("::", 1)[-1], paths))
    return out[:40]


def spoke_in_state(export: dict, spoke: str) -> dict[str, tuple[str, str]]:
    """{URN: (id, uid of the live object it recorded)} of every resource of `spoke` in a
    `pulumi stack export` document: the same map before and after a run means the run
    kept the spoke in the state as it was."""
    out = {}
    for res in (export.get("deployment") or {}).get("resources") or []:
        name = res["urn"].rsplit("::", 1)[-1]
        if name == spoke or name.startswith(f"{spoke}:"):
            uid = ((res.get("outputs") or {}).get("metadata") or {}).get("uid", "")
            out[res["urn"]] = (res.get("id", ""), uid if isinstance(uid, str) else "")
    return out


def plain(value: object) -> object:
    """`value` with each secret as one placeholder: every state write encrypts anew."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            return "<secret>"
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def recorded_inputs(export: dict, spokes: list[str] | None = None
                    ) -> dict[str, tuple[str, str]]:
    """{URN: (id, its inputs as JSON)} of every custom resource in a `pulumi stack
    export` document (of `spokes` alone when given; providers aside): the same map before
    and after a run means the run recorded nothing new."""
    out = {}
    for res in (export.get("deployment") or {}).get("resources") or []:
        if not res.get("custom") or res["type"].startswith("pulumi:providers:"):
            continue
        if spokes is not None and res["urn"].rsplit("::", 1)[-1].split(":", 1)[0] not in spokes:
            continue
        out[res["urn"]] = (res.get("id", ""),
                           json.dumps(plain(res.get("inputs")), sort_keys=True))
    return out


def deployments_available(api: client.ApiClient, namespace: str) -> dict[str, bool]:
    apps = client.AppsV1Api(api)
    result = {}
    for d in apps.list_namespaced_deployment(namespace).items:
        conds = {c.type: c.status for c in (d.status.conditions or [])}
        result[d.metadata.name] = conds.get("Available") == "True"
    return result


def all_available(api: client.ApiClient, namespace: str) -> bool:
    """Whether the namespace has Deployments and every one is Available."""
    deps = deployments_available(api, namespace)
    return bool(deps) and all(deps.values())


@contextmanager
def module_stack(lab: Lab, prefix: str, state_dir: Path,
                 fleet: list[dict] | None = None,
                 binaries: Binaries | None = None) -> Iterator[FleetStack]:
    """A new `t-<prefix>-*` stack for one test module (on `binaries`), installed with
    `fleet` when given; destroyed and removed afterwards whatever the tests did."""
    stack = FleetStack(lab, f"t-{prefix}-{uuid.uuid4().hex[:6]}", state_dir, binaries)
    stack.init()
    try:
        if fleet is not None:
            stack.configure(fleet)
            res = stack.up()
            assert res.ok, res.why
        yield stack
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
