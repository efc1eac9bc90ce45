"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

import json

from core.profiling import profile_if_asked

profile_if_asked()  # KNATIVE_FLEET_PROFILE=FILE: the program's CPU profile (README, "Benchmarks")

from core.program_runtime import use_program_runtime  # noqa: E402

use_program_runtime()  # each part can be turned off (README, "Debug output and caches")

import pulumi  # noqa: E402 - imported inside the profile when one is asked for

from components.fleet import deploy  # noqa: E402
from config.fleet import CONFIG_NAMESPACE, parse_fleet_config  # noqa: E402
from core.errors import ConfigError  # noqa: E402

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
