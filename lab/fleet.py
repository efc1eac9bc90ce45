"""The product's own stack on a lab, driven as a user drives it: by the tests and by
the benchmark."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from core.settings import Binaries
from lab.admitted import admit
from lab.handle import Lab
from lab.paths import RELEASES, REPO
from lab.stack import Result, Stack
from ownership.hold import HELD_BY_STACK_ANNOTATION, LEASE_NAME, LEASE_NAMESPACE

STACKS = REPO / "stacks"
REQUEST_TIMEOUT_S = 5


def entry(name: str, profile: str | None = None, serving: str | None = "1.23",
          eventing: str | None = "1.23", **extra: object) -> dict:
    """One fleet entry for spoke `name` of the lab, as a user writes it in the config."""
    e: dict = {"name": name,
               "clusterProfileRef": {"name": profile or name, "namespace": "fleet-system"}}
    if serving:
        e["serving"] = {"version": serving}
    if eventing:
        e["eventing"] = {"version": eventing}
    e.update(extra)
    return e


def fleet_config(lab: Lab, fleet: list[dict], **overrides: object) -> dict:
    """The stack config for `fleet` on `lab`; an override of None removes that key."""
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

    def __init__(self, lab: Lab, name: str, state_dir: Path,
                 binaries: Binaries | None = None) -> None:
        super().__init__(REPO, name, state_dir, lab.bin, binaries=binaries)
        self.lab = lab

    def configure(self, fleet: list[dict], **overrides: object) -> None:
        """Writes the stack file; the lab identity's rights grown to hold it first, as a
        user applies the rights printed for a changed stack file (lab.admitted)."""
        config = fleet_config(self.lab, fleet, **overrides)
        admit(self.lab, config)
        self.write_config(STACKS, config)

    def preview_document(self) -> tuple[Result, dict]:
        """`pulumi preview --json`: the result and its document ({} when there is none)."""
        res = self.run("preview", "--json")
        try:
            data, _ = json.JSONDecoder().raw_decode(res.out[res.out.index("{"):])
        except ValueError:
            return res, {}
        return res, data

    def preview_steps(self) -> tuple[Result, list[dict]]:
        res, data = self.preview_document()
        return res, data.get("steps", [])

    def cleanup(self) -> None:
        """Its config file, and any hold a failed run of it left on the lab's spokes (a run
        the engine ends on failure has no time to release it; it would expire by itself,
        but the next test on the lab must not meet it)."""
        self.config_file(STACKS).unlink(missing_ok=True)
        for spoke in self.lab.spokes:
            # A spoke a test stopped, or removed (its kubeconfig gone with it).
            with contextlib.suppress(ApiException, ConfigException, HTTPError, OSError):
                release_left_hold(spoke.api(), f"/{self.stack}@")


def release_left_hold(api: client.ApiClient, stack_marker: str) -> bool:
    """Deletes the spoke's hold Lease when a run of the stack whose owner name holds
    `stack_marker` holds it (precondition: that Lease's uid); whether it did."""
    coordination = client.CoordinationV1Api(api)
    try:
        lease = coordination.read_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE,
                                                   _request_timeout=REQUEST_TIMEOUT_S)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    if stack_marker not in (lease.metadata.annotations or {}).get(HELD_BY_STACK_ANNOTATION, ""):
        return False
    try:
        coordination.delete_namespaced_lease(
            LEASE_NAME, LEASE_NAMESPACE,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(
                uid=lease.metadata.uid)), _request_timeout=REQUEST_TIMEOUT_S)
    except ApiException as exc:
        if exc.status in (404, 409):
            return False
        raise
    return True
