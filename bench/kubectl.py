"""The kubectl baseline: exactly the objects knative-fleet registers for one spoke, in the
plan's own stage order (`InstallPlan.stages`), applied, diffed and deleted with plain
kubectl. The order comes from the plan, so the baseline follows the product's."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bench.commands import BenchError, Runner, Timed
from bench.sampling import MachineCpu
from config.fleet import FleetEntry
from knative import manifests
from knative import plan as planning
from lab.handle import Lab
from lab.toolchain import tool_env

CRDS_STAGE, ANCHOR_STAGE, DEPLOYMENTS_STAGE = "crds", "anchor", "deployments"
FIELD_MANAGER = "knative-fleet"  # the product's own, so both sides own the same fields


@dataclass
class Baseline:
    """The objects knative-fleet renders for one spoke, split into what is applied before
    the anchors' uids are known (every unowned stage) and what the anchors own."""

    first: list[dict] = field(default_factory=list)  # per component: its unowned stages
    owned: list[tuple[str, dict]] = field(default_factory=list)  # (anchor name, object)
    crds: list[str] = field(default_factory=list)
    anchors: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name)
    deployments: dict[str, list[str]] = field(
        default_factory=lambda: defaultdict(list))  # namespace -> Deployment names

    @property
    def count(self) -> int:
        return len(self.first) + len(self.owned)


def baseline_of(plans: Iterable[planning.InstallPlan]) -> Baseline:
    """The baseline over each plan's stages, in order: unowned stages go to the first
    apply, owned ones (ownerReference to the plan's anchor) to the second."""
    base = Baseline()
    for plan in plans:
        stages = {stage.name: stage for stage in plan.stages}
        (anchor,) = stages[ANCHOR_STAGE].objects
        namespace, anchor_name = anchor["metadata"]["namespace"], anchor["metadata"]["name"]
        base.anchors.append((namespace, anchor_name))
        base.crds.extend(c["metadata"]["name"] for c in stages[CRDS_STAGE].objects)
        for stage in plan.stages:
            if stage.owned:
                base.owned.extend((anchor_name, o) for o in stage.objects)
            else:
                base.first.extend(stage.objects)
        for obj in stages[DEPLOYMENTS_STAGE].objects:
            meta = obj["metadata"]
            base.deployments[meta.get("namespace") or namespace].append(meta["name"])
    return base


def render_baseline(fleet_entry: FleetEntry, release_base: str) -> Baseline:
    """The project's own plan for a fresh spoke (no install namespace exists yet)."""
    return baseline_of(planning.plan_spoke(fleet_entry.serving, fleet_entry.eventing,
                                           release_base, {}))


class Kubectl:
    """kubectl against one spoke, with its admin kubeconfig from the lab."""

    def __init__(self, lab: Lab, spoke: str, runner: Runner) -> None:
        self.lab = lab
        self.env = tool_env(lab.bin, {"KUBECONFIG": lab.spoke(spoke).kubeconfig})
        self.runner = runner
        self.work = lab.dir.root / "work"

    def __call__(self, *args: str, ok_codes: tuple[int, ...] = (0,),
                 record: bool = True) -> Timed:
        res = self.runner.run([str(self.lab.bin / "kubectl"), *args], self.env, record=record)
        if res.code not in ok_codes:
            raise res.fail(f"kubectl {args[0]}")
        return res

    def write(self, name: str, objects: list[dict]) -> Path:
        path = self.work / name
        path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
        return path

    def apply(self, path: Path) -> Timed:
        return self("apply", "--server-side", "--force-conflicts",
                    f"--field-manager={FIELD_MANAGER}", "-f", str(path))

    def install(self, base: Baseline) -> tuple[float, float, list[dict]]:
        """Apply + wait, timed as one; returns (seconds, machine CPU busy %, every object
        as applied)."""
        first = self.write("first.yaml", base.first)
        start = time.monotonic()
        cpu = MachineCpu()
        self.apply(first)
        self("wait", "--for=condition=Established", "--timeout=300s",
             *[f"crd/{name}" for name in base.crds])
        uids = {}
        for namespace, name in base.anchors:
            res = self("get", "configmap", "-n", namespace, name, "-o",
                       "jsonpath={.metadata.uid}")
            uids[name] = res.stdout.strip()
        owned = [manifests.with_owner(o, manifests.owner_reference(a, uids[a]))
                 for a, o in base.owned]
        self.apply(self.write("owned.yaml", owned))
        for namespace, names in base.deployments.items():
            self("wait", "--for=condition=Available", "--timeout=600s", "-n", namespace,
                 *[f"deployment/{n}" for n in names])
        return time.monotonic() - start, cpu.busy_pct(), [*base.first, *owned]

    def diff(self, objects: list[dict]) -> Timed:
        """`kubectl diff --server-side`: exit 0 no difference, 1 differences."""
        path = self.write("all.yaml", objects)
        return self("diff", "--server-side", "--force-conflicts",
                    f"--field-manager={FIELD_MANAGER}", "-f", str(path), ok_codes=(0, 1))

    def delete(self, objects: list[dict]) -> Timed:
        """Deletes the same objects, dependents first, and waits until they are gone."""
        path = self.write("delete.yaml", list(reversed(objects)))
        return self("delete", "--wait=true", "--ignore-not-found=true", "--timeout=600s",
                    "-f", str(path))

    def assert_fresh(self, spoke: str) -> None:
        """The spoke has no install namespace and no Knative CRD left (a fresh spoke)."""
        res = self("get", "namespaces,crds", "-o", "name", record=False)
        left = [line for line in res.stdout.split() if "knative" in line]
        if left:
            raise BenchError(f"{spoke} is not fresh: {', '.join(left[:5])}")


def differing_objects(diff_output: str) -> list[str]:
    """The objects `kubectl diff` reports, from its `diff -u -N <dir>/LIVE-x/<group.version.
    Kind.namespace.name> <dir>/MERGED-x/...` lines."""
    return sorted({line.split()[3].rsplit("/", 1)[-1] for line in diff_output.splitlines()
                   if line.startswith("diff ") and len(line.split()) > 3})
