"""spec.defaultBrokerClass: the operator's DefaultBrokerConfigMapTransform
(pkg/reconciler/knativeeventing/common/defaultbroker.go).

The class of Brokers that name none, written into config-br-defaults `default-br-config`
as `clusterDefault.brokerClass`. Eventing only: a Serving spec is left alone.

The operator runs it among KnativeEventing's extra transformers (knativeeventing.go
`transform`), after ConfigMapTransform: it edits `default-br-config` as `config` left it,
unless the `config` value of that key names a broker class itself.
"""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from core.errors import TransformError
from knative.objects import Rendered, find, require
from models.component import ComponentSpec

BROKER_DEFAULTS_CONFIGMAP = "config-br-defaults"
BROKER_DEFAULTS_KEY = "default-br-config"
# What the release (and the operator, when spec.defaultBrokerClass is empty) uses.
DEFAULT_BROKER_CLASS = "MTChannelBasedBroker"
# What the operator looks for in a `config` default-br-config (findDefaultBrokerClassDefined).
BROKER_CLASS_MARK = "brokerClass:"


def config_names_broker_class(user_config: Mapping[str, Mapping[str, str]]) -> bool:
    """The operator's findDefaultBrokerClassDefined over `config.br-defaults` and
    `config.config-br-defaults`: whether the `default-br-config` given there contains
    `brokerClass:` anywhere (a namespace default's too, as in the operator)."""
    for name in (BROKER_DEFAULTS_CONFIGMAP.removeprefix("config-"), BROKER_DEFAULTS_CONFIGMAP):
        value = (user_config.get(name) or {}).get(BROKER_DEFAULTS_KEY)
        if value is not None and BROKER_CLASS_MARK in str(value):
            return True
    return False


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Writes `defaultBrokerClass` the operator way into config-br-defaults
    `default-br-config` as `clusterDefault.brokerClass` (the rest of that YAML is kept).
    Runs after `config` (knative.transforms.TRANSFORMS), so it edits the value `config` gave.

    If the user's `config` sets `br-defaults.default-br-config` to a value that contains
    `brokerClass:`, that value wins and nothing is changed here. A `default-br-config`
    from `config` without it gets the class added, as the operator does.

    Unset means the operator's default, MTChannelBasedBroker (the release's value): the
    release is left as it is, a `default-br-config` from `config` gets it added.
    """
    if "default_broker_class" not in type(spec).model_fields:
        return rendered  # Serving has no such key
    broker_class = spec.default_broker_class
    if broker_class is not None and (
            not broker_class or any(c.isspace() for c in broker_class)):
        raise TransformError(f"defaultBrokerClass must be a non-empty class name without "
                             f"spaces, got {broker_class!r}")
    if config_names_broker_class(spec.config):
        return rendered
    if broker_class is None:
        configmap = find(rendered.namespaced, "ConfigMap", BROKER_DEFAULTS_CONFIGMAP)
        if configmap is None:
            return rendered  # as in the operator, nothing to set it on
        broker_class = DEFAULT_BROKER_CLASS
    else:
        configmap = require(rendered.namespaced, "ConfigMap", BROKER_DEFAULTS_CONFIGMAP,
                            why="defaultBrokerClass",
                            hint="check the Eventing release files loaded")
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
    # Written anew every time, keys sorted, as the operator's writeDefaultsToConfigMap
    # does (sigs.k8s.io/yaml JSONToYAML): the same text on both, whatever the release's.
    data[BROKER_DEFAULTS_KEY] = yaml.safe_dump(defaults, sort_keys=True,
                                               default_flow_style=False)
    configmap["data"] = data
    return rendered
