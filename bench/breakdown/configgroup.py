"""The ConfigGroup trial (bench/configgroup_trial): the same spoke's release objects
registered through pulumi-kubernetes' provider-side `yaml/v2` ConfigGroup, one group per
install stage, timed and sampled like the product's own stack on the same fresh spoke."""

from __future__ import annotations

import json
from typing import Any

from bench.breakdown.requests import Requests
from bench.commands import Runner, Timed
from bench.log import log
from bench.sampling import TOTAL
from lab.handle import Lab
from lab.paths import RELEASES, REPO
from lab.stack import Stack

PROJECT = REPO / "bench" / "configgroup_trial"


def figures(res: Timed) -> dict[str, Any]:
    """Wall seconds and the process tree's CPU seconds by kind, of one sampled command."""
    return {"s": res.seconds, "cpu_s": res.cpu_s.get(TOTAL, 0.0),
            "cpu_by_kind_s": {k: v for k, v in res.cpu_s.items() if k != TOTAL}}


def preview_steps(res: Timed) -> int:
    """How many resource steps a `pulumi preview --json` showed."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(res.stdout[res.stdout.index("{"):])
    except ValueError as exc:
        raise res.fail("pulumi preview --json") from exc
    return len(doc.get("steps", []))


class Trial:
    """The trial's stack in the lab's state backend, against one spoke."""

    def __init__(self, lab: Lab, runner: Runner, name: str, spoke: str) -> None:
        self.stack = Stack(PROJECT, name, lab.dir.state, lab.bin)
        self.runner, self.lab, self.spoke = runner, lab, spoke

    def pulumi(self, what: str, *args: str) -> Timed:
        res = self.runner.run(["pulumi", "--cwd", str(PROJECT), *args, "--stack",
                               self.stack.stack, "--non-interactive"], self.stack.env,
                              sample_rss=True)
        if not res.ok:
            raise res.fail(what)
        return res

    def configure(self) -> None:
        self.stack.init()
        self.stack.write_config(PROJECT, {
            "knative-fleet-configgroup-trial:spoke": self.spoke,
            "knative-fleet-configgroup-trial:kubeconfig": self.lab.spoke(self.spoke).kubeconfig,
            "knative-fleet-configgroup-trial:releaseBase": f"file://{RELEASES}",
            "knative-fleet-configgroup-trial:deleteCrds": "true"})

    def run(self) -> dict[str, Any]:
        """First-install preview, install, no-op preview and destroy on the fresh spoke."""
        out: dict[str, Any] = {}
        log("ConfigGroup trial: first-install preview")
        out["first_preview_steps"] = preview_steps(self.pulumi("pulumi preview", "preview",
                                                                "--json"))
        log("ConfigGroup trial: pulumi up")
        with Requests(self.lab.spoke(self.spoke).api()) as requests:
            out["install"] = figures(self.pulumi("pulumi up", "up", "--yes", "--skip-preview"))
        out["install_requests"] = dict(requests.counts.most_common())
        log("ConfigGroup trial: no-op preview")
        out["preview"] = figures(self.pulumi("pulumi preview", "preview", "--diff",
                                             "--expect-no-changes"))
        log("ConfigGroup trial: pulumi destroy")
        out["destroy"] = figures(self.pulumi("pulumi destroy", "destroy", "--yes",
                                             "--skip-preview"))
        return out

    def drop(self) -> None:
        try:
            self.stack.destroy()
            self.stack.remove()
        except Exception as exc:  # noqa: BLE001 - teardown goes on
            log(f"could not remove the trial stack: {type(exc).__name__}")
        finally:
            self.stack.config_file(PROJECT).unlink(missing_ok=True)


def trial(lab: Lab, runner: Runner, name: str, spoke: str) -> dict[str, Any]:
    t = Trial(lab, runner, name, spoke)
    try:
        t.configure()
        return t.run()
    finally:
        t.drop()
