"""The product's own stack, driven by tests as a user drives it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kubernetes import client

from lab.paths import RELEASES, REPO
from tests.support.lab import Lab
from tests.support.pulumi_cli import Result, Stack

STACKS = REPO / "stacks"


def entry(name: str, profile: str | None = None, serving: str | None = "1.23",
          eventing: str | None = "1.23", **extra: object) -> dict:
    e: dict = {"name": name,
               "clusterProfileRef": {"name": profile or name, "namespace": "fleet-system"}}
    if serving:
        e["serving"] = {"version": serving}
    if eventing:
        e["eventing"] = {"version": eventing}
    e.update(extra)
    return e


def fleet_config(lab: Lab, fleet: list[dict], **overrides: object) -> dict:
    cfg = {
        "knative-fleet:hub": {"kubeconfig": lab.hub.kubeconfig},
        "knative-fleet:providerFile": lab.provider_file,
        "knative-fleet:releaseBase": f"file://{RELEASES}",
        "knative-fleet:fleet": fleet,
    }
    for key, value in overrides.items():
        if value is None:
            cfg.pop(f"knative-fleet:{key}", None)
        else:
            cfg[f"knative-fleet:{key}"] = value
    return cfg


class FleetStack(Stack):
    """A `t-*` stack of the product (ignored by git), with helpers for its preview."""

    def __init__(self, lab: Lab, name: str, state_dir: Path) -> None:
        super().__init__(REPO, name, state_dir, lab.bin)
        self.lab = lab

    def configure(self, fleet: list[dict], **overrides: object) -> None:
        self.write_config(STACKS, fleet_config(self.lab, fleet, **overrides))

    def preview_steps(self) -> tuple[Result, list[dict]]:
        res = self.run("preview", "--json")
        try:
            data = json.loads(res.out[res.out.index("{"):])
        except ValueError:
            return res, []
        return res, data.get("steps", [])

    def cleanup(self) -> None:
        self.config_file(STACKS).unlink(missing_ok=True)


def changed_spokes(steps: list[dict]) -> dict[str, set[str]]:
    """{spoke name: {ops}} for every step that is not `same`."""
    out: dict[str, set[str]] = {}
    for step in steps:
        if step.get("op") in ("same", "read"):
            continue
        name = step["urn"].rsplit("::", 1)[-1]
        spoke = name.split(":", 1)[0]
        out.setdefault(spoke, set()).add(step["op"])
    return out


def deployments_available(api: client.ApiClient, namespace: str) -> dict[str, bool]:
    apps = client.AppsV1Api(api)
    result = {}
    for d in apps.list_namespaced_deployment(namespace).items:
        conds = {c.type: c.status for c in (d.status.conditions or [])}
        result[d.metadata.name] = conds.get("Available") == "True"
    return result


@contextmanager
def module_stack(lab: Lab, prefix: str, state_dir: Path,
                 fleet: list[dict] | None = None) -> Iterator[FleetStack]:
    """A new `t-<prefix>-*` stack for one test module, installed with `fleet` when given;
    destroyed and removed afterwards whatever the tests did."""
    stack = FleetStack(lab, f"t-{prefix}-{uuid.uuid4().hex[:6]}", state_dir)
    stack.init()
    try:
        if fleet is not None:
            stack.configure(fleet)
            res = stack.up()
            assert res.ok, res.out
        yield stack
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
