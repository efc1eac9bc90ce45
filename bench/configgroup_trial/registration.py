"""The trial's registration path: one spoke's release objects through pulumi-kubernetes'
provider-side `yaml/v2` ConfigGroup, one group per stage of the install plan, in the
plan's order, instead of one Python resource per object. The anchor stays a ConfigMap of
its own (its uid makes the owned stages' ownerReferences). No aggregated-role guard: only
the registration path is compared.

`objs`: the objects go to the provider as structured inputs (the SDK serializes every
value, as it does for one resource per object). `yaml`: as one JSON document stream per
group, a single string (JSON is YAML), so the SDK serializes one value per group.
`objs-aliased`, `yaml-aliased`: each child also given an alias by a transform
(`_alias_child`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable

import pulumi
import pulumi_kubernetes as k8s

from bench.design import TRIAL_MODES
from components.spoke import _applied
from knative import manifests
from knative.plan import InstallPlan

# A mode with this suffix adds a transform to every group that gives each child an alias,
# as a move of an installed stack from one resource per object would need (bench/floor
# measures what it costs): `objs-aliased`, `yaml-aliased`.
ALIASED = "-aliased"
MODES = tuple(f"{mode}{suffix}" for mode in TRIAL_MODES for suffix in ("", ALIASED))


def _stream(objs: list[dict]) -> str:
    return "\n---\n".join(json.dumps(o, sort_keys=True) for o in objs)


def _alias_child(spoke: str, args: pulumi.ResourceTransformArgs
                 ) -> pulumi.ResourceTransformResult | None:
    """Every child of a group gets what a move from one resource per object needs: an
    alias to the object's URN in that layout (here a URN of the trial's stack)."""
    if not args.custom:
        return None
    old = (f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{args.type_}"
           f"::{spoke}:{args.name}")
    return pulumi.ResourceTransformResult(
        props=args.props, opts=pulumi.ResourceOptions.merge(
            args.opts, pulumi.ResourceOptions(aliases=[old])))


def register(spoke: str, plans: Iterable[InstallPlan], provider: k8s.Provider,
             mode: str = "objs") -> list[pulumi.Resource]:
    """Every stage of every plan as a ConfigGroup (the anchor as a ConfigMap)."""
    if mode not in MODES:
        raise ValueError(f"registration mode {mode!r}: one of {', '.join(MODES)}")
    aliased, mode = mode.endswith(ALIASED), mode.removesuffix(ALIASED)
    registered: list[pulumi.Resource] = []
    for plan in plans:
        done: dict[str, list[pulumi.Resource]] = {}
        owner: pulumi.Output[dict] | None = None
        for stage in plan.stages:
            after = stage.after
            if stage.name == "deployments":
                # A ConfigGroup's awaiting Deployments hold the engine's parallel slots;
                # the ServiceAccounts their pods need (the namespaced group) could wait for
                # a slot until the Deployments' await times out. The product's per-object
                # registration does not need this order.
                after = (*after, "namespaced")
            deps = [r for name in after for r in done[name]]
            opts = pulumi.ResourceOptions(provider=provider, depends_on=deps)
            name = f"{spoke}-{plan.component}-{stage.name}"
            if stage.name == "anchor":
                (obj,) = stage.objects
                anchor = k8s.core.v1.ConfigMap(name, metadata=_applied(obj)["metadata"],
                                               opts=opts)
                owner = anchor.metadata.uid.apply(
                    functools.partial(manifests.owner_reference, obj["metadata"]["name"]))
                done[stage.name] = [anchor]
                registered.append(anchor)
                continue
            if not stage.objects:
                done[stage.name] = deps
                continue
            objs: object = [_applied(o) for o in stage.objects]
            if stage.owned:
                assert owner is not None, "owned stages come after the anchor"
                objs = owner.apply(lambda ref, objs=objs: [manifests.with_owner(o, ref)
                                                           for o in objs])
            if stage.name == "crds" and not plan.delete_crds:
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                    retain_on_delete=True))
            if aliased:
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                    transforms=[functools.partial(_alias_child, spoke)]))
            if mode == "yaml":
                text = (objs.apply(_stream) if isinstance(objs, pulumi.Output)
                        else _stream(objs))  # type: ignore[arg-type]
                group = k8s.yaml.v2.ConfigGroup(name, yaml=text, opts=opts)
            else:
                group = k8s.yaml.v2.ConfigGroup(name, objs=objs, opts=opts)
            done[stage.name] = [group]
            registered.append(group)
    return registered
