"""A trial, not the product: one spoke's release objects registered through
pulumi-kubernetes' provider-side `yaml/v2` ConfigGroup (`objs=`), one group per stage
of knative-fleet's install plan, in the plan's order, instead of one Python resource
per object. The anchor stays a ConfigMap of its own (its uid makes the owned stages'
ownerReferences). No aggregated-role guard: only the registration path is compared.

Config: `spoke` (a name), `kubeconfig` (a file), `releaseBase`, `deleteCrds` (bool).
Run by `python -m bench.breakdown` against a lab spoke.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's packages

from components.spoke import _applied  # noqa: E402 - the product's own apply annotations
from config.fleet import parse_fleet_config  # noqa: E402
from knative import manifests  # noqa: E402
from knative import plan as planning  # noqa: E402

cfg = pulumi.Config()
spoke = cfg.require("spoke")
delete_crds = cfg.require_bool("deleteCrds")
fleet = parse_fleet_config({
    "releaseBase": cfg.require("releaseBase"),
    "fleet": [{"name": spoke, "clusterProfileRef": {"name": spoke, "namespace": "fleet-system"},
               "serving": {"version": "1.23", "deleteCrdsOnDestroy": delete_crds},
               "eventing": {"version": "1.23", "deleteCrdsOnDestroy": delete_crds}}],
})
entry = fleet.fleet[0]
provider = k8s.Provider(
    spoke, kubeconfig=pulumi.Output.secret(Path(cfg.require("kubeconfig")).read_text()),
    enable_server_side_apply=True, enable_config_map_mutable=True,
    enable_secret_mutable=True)

for plan in planning.plan_spoke(entry.serving, entry.eventing, fleet.release_base, {}):
    done: dict[str, list[pulumi.Resource]] = {}
    owner = None
    for stage in plan.stages:
        after = stage.after
        if stage.name == "deployments":
            # A ConfigGroup's awaiting Deployments hold the engine's parallel slots; the
            # ServiceAccounts their pods need (the namespaced group) could wait for a slot
            # until the Deployments' await times out. The product's per-object
            # registration does not need this order.
            after = (*after, "namespaced")
        deps = [r for name in after for r in done[name]]
        opts = pulumi.ResourceOptions(provider=provider, depends_on=deps)
        name = f"{spoke}-{plan.component}-{stage.name}"
        if stage.name == "anchor":
            (obj,) = stage.objects
            anchor = k8s.core.v1.ConfigMap(name, metadata=_applied(obj)["metadata"], opts=opts)
            owner = anchor.metadata.uid.apply(
                functools.partial(manifests.owner_reference, obj["metadata"]["name"]))
            done[stage.name] = [anchor]
            continue
        if not stage.objects:
            done[stage.name] = deps
            continue
        objs = [_applied(o) for o in stage.objects]
        if stage.owned:
            objs = owner.apply(lambda ref, objs=objs: [manifests.with_owner(o, ref)
                                                       for o in objs])
        if stage.name == "crds" and not plan.delete_crds:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                retain_on_delete=True))
        group = k8s.yaml.v2.ConfigGroup(name, objs=objs, opts=opts)
        done[stage.name] = [group]
