"""The product's own stack on a lab, driven as a user drives it: by the tests and by
the benchmark."""

from __future__ import annotations

import json
from pathlib import Path

from core.settings import Binaries
from lab.handle import Lab
from lab.paths import RELEASES, REPO
from lab.stack import Result, Stack

STACKS = REPO / "stacks"


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
        self.write_config(STACKS, fleet_config(self.lab, fleet, **overrides))

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
        self.config_file(STACKS).unlink(missing_ok=True)
