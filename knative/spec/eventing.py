"""Eventing's operator-parity options: default broker class, SinkBinding selection mode
and the optional sources, as validated models and pure transforms over `Rendered`.

Transforms mutate the rendered objects in place and return them, like
`transforms.merge_config`. They follow the Knative Operator's
pkg/reconciler/knativeeventing/common/{defaultbroker,sinkbindingselectionmode}.go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal, get_args

import yaml
from pydantic import Field

from core.errors import TransformError
from core.strict import Strict
from knative.manifests import Rendered
from knative.spec.ingress import user_config_sets

SinkBindingSelectionMode = Literal["inclusion", "exclusion"]
SINK_BINDING_SELECTION_MODES: tuple[str, ...] = get_args(SinkBindingSelectionMode)
SINK_BINDING_ENV = "SINK_BINDING_SELECTION_MODE"
EVENTING_WEBHOOK = "eventing-webhook"

BROKER_DEFAULTS_CONFIGMAP = "config-br-defaults"
BROKER_DEFAULTS_KEY = "default-br-config"
# What the release (and the operator, when spec.defaultBrokerClass is empty) uses.
DEFAULT_BROKER_CLASS = "MTChannelBasedBroker"

BrokerClass = Annotated[str, Field(min_length=1, pattern=r"^\S+$")]


class SourceOptions(Strict):
    """One optional eventing source. Naming it enables it (as `ingress.kourier` does);
    `enabled: false` keeps an entry without installing it."""

    enabled: bool = True


class EventingSources(Strict):
    """`source`: the operator's SourceConfigs; releases.SOURCE_FILES says what each loads."""

    kafka: SourceOptions | None = None
    rabbitmq: SourceOptions | None = None
    redis: SourceOptions | None = None
    github: SourceOptions | None = None
    gitlab: SourceOptions | None = None
    ceph: SourceOptions | None = None

    def enabled_names(self) -> list[str]:
        """Names of the enabled sources, in releases.SOURCE_FILES order."""
        return [name for name in type(self).model_fields
                if (options := getattr(self, name)) is not None and options.enabled]


class EventingOptions(Strict):
    """The Eventing spec fields these options add, for the Eventing spec model to inherit:
    `defaultBrokerClass`, `sinkBindingSelectionMode` and `source`."""

    default_broker_class: BrokerClass | None = Field(None, alias="defaultBrokerClass")
    sink_binding_selection_mode: SinkBindingSelectionMode | None = Field(
        None, alias="sinkBindingSelectionMode")
    source: EventingSources = Field(default_factory=EventingSources)


def _configmap(rendered: Rendered, name: str, why: str) -> dict:
    for obj in rendered.namespaced:
        if obj.get("kind") == "ConfigMap" and obj["metadata"].get("name") == name:
            return obj
    raise TransformError(f"{why} changes the ConfigMap {name!r}, which this release does not "
                         "have; check the Eventing release files loaded")


def apply_default_broker_class(rendered: Rendered, broker_class: str | None,
                               user_config: Mapping[str, Mapping[str, str]] | None = None
                               ) -> Rendered:
    """`defaultBrokerClass`: the class of Brokers that name none, written the operator way
    into config-br-defaults `default-br-config` as `clusterDefault.brokerClass` (the
    rest of that YAML is kept).

    Unset leaves the release value (MTChannelBasedBroker, the operator's default too).
    If the user's `config` sets `br-defaults.default-br-config` itself, that wins and
    nothing is changed here.
    """
    if broker_class is None:
        return rendered
    if not broker_class or any(c.isspace() for c in broker_class):
        raise TransformError(f"defaultBrokerClass must be a non-empty class name without "
                             f"spaces, got {broker_class!r}")
    if user_config_sets(user_config, BROKER_DEFAULTS_CONFIGMAP, (BROKER_DEFAULTS_KEY,)):
        return rendered
    configmap = _configmap(rendered, BROKER_DEFAULTS_CONFIGMAP, "defaultBrokerClass")
    data = dict(configmap.get("data") or {})
    try:
        defaults = yaml.safe_load(data.get(BROKER_DEFAULTS_KEY) or "") or {}
    except yaml.YAMLError as exc:
        raise TransformError(
            f"{BROKER_DEFAULTS_CONFIGMAP} {BROKER_DEFAULTS_KEY} is not valid YAML ({exc}); "
            "fix it in `config` or drop defaultBrokerClass") from exc
    if not isinstance(defaults, dict) or not isinstance(
            defaults.setdefault("clusterDefault", {}), dict):
        raise TransformError(
            f"{BROKER_DEFAULTS_CONFIGMAP} {BROKER_DEFAULTS_KEY} must be a mapping with a "
            "clusterDefault mapping to take defaultBrokerClass")
    defaults["clusterDefault"]["brokerClass"] = broker_class
    data[BROKER_DEFAULTS_KEY] = yaml.safe_dump(defaults, sort_keys=False,
                                               default_flow_style=False)
    configmap["data"] = data
    return rendered


def apply_sink_binding_selection_mode(rendered: Rendered,
                                      mode: SinkBindingSelectionMode | str | None) -> Rendered:
    """`sinkBindingSelectionMode`: which namespaces/objects the SinkBinding webhook
    considers (`inclusion`: only those labelled bindings.knative.dev/include=true;
    `exclusion`: all but those labelled bindings.knative.dev/exclude=true).

    Like the operator, sets SINK_BINDING_SELECTION_MODE on every container of the
    eventing-webhook Deployment, replacing the release value or adding it. Unset leaves
    the release value (`exclusion`, the operator's default too).
    """
    if mode is None:
        return rendered
    if mode not in SINK_BINDING_SELECTION_MODES:
        raise TransformError(f"sinkBindingSelectionMode must be one of "
                             f"{', '.join(SINK_BINDING_SELECTION_MODES)}, got {mode!r}")
    deployment = next((o for o in rendered.namespaced if o.get("kind") == "Deployment"
                       and o["metadata"].get("name") == EVENTING_WEBHOOK), None)
    if deployment is None:
        raise TransformError(f"sinkBindingSelectionMode changes the Deployment "
                             f"{EVENTING_WEBHOOK!r}, which this release does not have; check "
                             "the Eventing release files loaded")
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec")
                  or {}).get("containers") or []
    if not containers:
        raise TransformError(f"sinkBindingSelectionMode: the {EVENTING_WEBHOOK} Deployment of "
                             "this release has no container")
    for container in containers:
        env = list(container.get("env") or [])
        for i, var in enumerate(env):
            if var.get("name") == SINK_BINDING_ENV:
                env[i] = {"name": SINK_BINDING_ENV, "value": mode}
                break
        else:
            env.append({"name": SINK_BINDING_ENV, "value": mode})
        container["env"] = env
    return rendered
