"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

import pulumi

from access import ProviderFileError
from components.fleet import deploy
from components.fleet_config import CONFIG_NAMESPACE, FleetConfigError, parse_fleet_config

KEYS = ("hub", "providerFile", "releaseBase", "pluginTimeoutSeconds", "fleet")


def raw_config() -> dict:
    cfg = pulumi.Config(CONFIG_NAMESPACE)
    raw = {}
    for key in KEYS:
        value = cfg.get_object(key)
        if value is not None:
            raw[key] = value
    return raw


try:
    deploy(parse_fleet_config(raw_config()))
except (FleetConfigError, ProviderFileError) as exc:
    raise pulumi.RunError(str(exc)) from None
