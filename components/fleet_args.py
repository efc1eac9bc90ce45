# ruff: noqa: UP045 - the host analyses `Optional[X]`; it refuses unions (`X | None`)
# The host's rules for a component's args (pulumi.provider.experimental): no
# `from __future__ import annotations` here, no tuples, no unions but Optional.
"""The `Fleet` component's inputs, typed for the package's schema: what a stack file says
under `knative-fleet:`, key by key (config.fleet.FleetConfig). Every property is optional
in the schema, so that what is missing or wrong is reported by the same validation as a
stack file's, with the same config path; the Knative specs are the operator's `spec`
objects, checked by the same models (models.component)."""

import typing
from typing import Any, NotRequired, Optional, TypedDict, Union


class HubArgs(TypedDict):
    kubeconfig: NotRequired[Optional[str]]
    """The hub's kubeconfig file; unset: $KUBECONFIG, then ~/.kube/config."""
    context: NotRequired[Optional[str]]
    """A context of that kubeconfig; unset: its current one."""


class ClusterProfileRefArgs(TypedDict):
    name: NotRequired[Optional[str]]
    """The ClusterProfile's name (required)."""
    namespace: NotRequired[Optional[str]]
    """The ClusterProfile's namespace on the hub, the inventory namespace (required)."""


class SpokeArgs(TypedDict):
    name: NotRequired[Optional[str]]
    """The spoke's name, a DNS label (required)."""
    cluster_profile_ref: NotRequired[Optional[ClusterProfileRefArgs]]
    """The ClusterProfile that describes the spoke (required)."""
    serving: NotRequired[Optional[dict[str, Any]]]
    """The `spec` of the operator's KnativeServing (docs/configuration.md)."""
    eventing: NotRequired[Optional[dict[str, Any]]]
    """The `spec` of the operator's KnativeEventing (docs/configuration.md)."""
    spoke_identity: NotRequired[Optional[str]]
    """Whom the access provider's credentials are for, when not the fleet's."""


class GroupArgs(TypedDict):
    name: NotRequired[Optional[str]]
    """The group's name (required)."""
    namespace: NotRequired[Optional[str]]
    """The inventory namespace whose ClusterProfiles the group selects (required)."""
    selector: NotRequired[Optional[dict[str, Any]]]
    """A label selector (`matchLabels`, `matchExpressions`) on ClusterProfiles (required)."""
    serving: NotRequired[Optional[dict[str, Any]]]
    """The `spec` of the operator's KnativeServing for every selected spoke."""
    eventing: NotRequired[Optional[dict[str, Any]]]
    """The `spec` of the operator's KnativeEventing for every selected spoke."""
    spoke_identity: NotRequired[Optional[str]]
    """Whom the access provider's credentials are for, when not the fleet's."""
    when_deselected: NotRequired[Optional[str]]
    """`Fail` (the default) or `Uninstall`: what a spoke no longer selected gets."""


class WaveArgs(TypedDict):
    name: NotRequired[Optional[str]]
    """The wave's name (required)."""
    selector: NotRequired[Optional[dict[str, Any]]]
    """A label selector on ClusterProfiles; only the last wave may omit it."""
    timeout: NotRequired[Optional[str]]
    """How long the wave may take to be healthy (`5m`, `1h30m`)."""
    max_failures: NotRequired[Optional[int]]
    """Spokes of the wave that may fail before the rollout stops."""
    max_parallel: NotRequired[Optional[int]]
    """Spokes of the wave changed at a time."""
    approval: NotRequired[Optional[str]]
    """`Required`: the wave changes only in a run a person approved."""


class RolloutArgs(TypedDict):
    waves: NotRequired[Optional[list[WaveArgs]]]
    """The waves, in order (at least one)."""


class FleetArgs(TypedDict):
    hub: NotRequired[Optional[HubArgs]]
    """The hub that holds the ClusterProfiles."""
    provider_file: NotRequired[Optional[str]]
    """The access-provider file, as the operator's --clusterprofile-provider-file."""
    release_base: NotRequired[Optional[str]]
    """Where the release files are read: https://github.com, a mirror or file://DIR."""
    plugin_timeout_seconds: NotRequired[Optional[float]]
    """How long one exec plugin run may take."""
    ring: NotRequired[Optional[int]]
    """The stack's rollout ring, for the fleet runner."""
    spoke_identity: NotRequired[Optional[str]]
    """Whom the access provider's credentials are for (`ServiceAccount:NS/NAME`, ...)."""
    fleet: NotRequired[Optional[list[SpokeArgs]]]
    """One entry per spoke, by ClusterProfile."""
    groups: NotRequired[Optional[list[GroupArgs]]]
    """Spokes chosen by ClusterProfile labels."""
    rollout: NotRequired[Optional[RolloutArgs]]
    """The order spokes change in, in waves."""


def camel(name: str) -> str:
    """A Python name as the schema (and the stack file) spells it."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def stack_config_of(args: Any, typ: Any = FleetArgs) -> Any:
    """The args as a stack file's `knative-fleet:` config gives them: the config's own
    key names, absent properties left out, and whole numbers where the schema says
    integer (the engine sends every number as a float)."""
    if typing.is_typeddict(typ):
        hints = typing.get_type_hints(typ)
        return {camel(key): stack_config_of(value, hints[key])
                for key, value in (args or {}).items() if value is not None}
    origin, params = typing.get_origin(typ), typing.get_args(typ)
    if origin in (NotRequired, Optional, Union):
        inner = [p for p in params if p is not type(None)]
        return stack_config_of(args, inner[0]) if len(inner) == 1 else args
    if origin is list and isinstance(args, list):
        return [stack_config_of(item, params[0]) for item in args]
    if typ is int and isinstance(args, float) and args.is_integer():
        return int(args)
    return args
