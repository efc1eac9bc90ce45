"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

import json

import pulumi

from components.fleet import deploy
from config.fleet import CONFIG_NAMESPACE, parse_fleet_config
from core.errors import ConfigError

STRING_KEYS = ("providerFile", "releaseBase")
STRUCTURED_KEYS = ("hub", "pluginTimeoutSeconds", "ring", "fleet", "groups", "rollout")


def raw_config() -> dict:
    """Stack config as plain data; types are checked by the fleet config model."""
    cfg = pulumi.Config(CONFIG_NAMESPACE)
    raw: dict = {}
    for key in STRING_KEYS + STRUCTURED_KEYS:
        value = cfg.get(key)
        if value is None:
            continue
        if key in STRUCTURED_KEYS:
            try:
                value = json.loads(value)
            except ValueError:
                pass  # left as text: validation reports the wrong type with its path
        raw[key] = value
    return raw


try:
    deploy(parse_fleet_config(raw_config()))
except ConfigError as exc:
    raise pulumi.RunError(str(exc)) from None
