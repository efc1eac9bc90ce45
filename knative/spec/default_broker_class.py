"""spec.defaultBrokerClass: the operator's DefaultBrokerConfigMapTransform
(pkg/reconciler/knativeeventing/common/defaultbroker.go).

The class of Brokers that name none, written into config-br-defaults `default-br-config`
as `clusterDefault.brokerClass`. Eventing only: a spec without the key is left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import yaml
from pydantic import Field

from core.errors import TransformError
from knative.manifests import Rendered
from knative.objects import require
from knative.spec.config import user_config_sets

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

BROKER_DEFAULTS_CONFIGMAP = "config-br-defaults"
BROKER_DEFAULTS_KEY = "default-br-config"
# What the release (and the operator, when spec.defaultBrokerClass is empty) uses.
DEFAULT_BROKER_CLASS = "MTChannelBasedBroker"

BrokerClass = Annotated[str, Field(min_length=1, pattern=r"^\S+$")]


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Writes `defaultBrokerClass` the operator way into config-br-defaults
    `default-br-config` as `clusterDefault.brokerClass` (the rest of that YAML is kept).

    Unset leaves the release value (MTChannelBasedBroker, the operator's default too).
    If the user's `config` sets `br-defaults.default-br-config` itself, that wins and
    nothing is changed here.
    """
    broker_class = getattr(spec, "default_broker_class", None)
    if broker_class is None:
        return rendered
    if not broker_class or any(c.isspace() for c in broker_class):
        raise TransformError(f"defaultBrokerClass must be a non-empty class name without "
                             f"spaces, got {broker_class!r}")
    if user_config_sets(spec.config, BROKER_DEFAULTS_CONFIGMAP, (BROKER_DEFAULTS_KEY,)):
        return rendered
    configmap = require(rendered.namespaced, "ConfigMap", BROKER_DEFAULTS_CONFIGMAP,
                        why="defaultBrokerClass", hint="check the Eventing release files loaded")
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
