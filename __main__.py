"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

import json

from core.profiling import profile_if_asked

profile_if_asked()  # KNATIVE_FLEET_PROFILE=FILE: the program's CPU profile (README, "Benchmarks")

from core.sdk_debug import quiet_sdk_debug  # noqa: E402

quiet_sdk_debug()  # KNATIVE_FLEET_SDK_DEBUG=1 keeps them (README, "Debug output and caches")

from core.sdk_outputs_wait import use_linear_wait  # noqa: E402

use_linear_wait()  # KNATIVE_FLEET_SDK_WAIT=sdk keeps the SDK's (README, "Debug output and caches")

from core.sdk_plain_values import use_plain_values  # noqa: E402

use_plain_values()  # KNATIVE_FLEET_SDK_SERIALIZE=sdk keeps the SDK's walk alone (same section)

from core.sdk_kept_outputs import use_kept_outputs  # noqa: E402

use_kept_outputs()  # KNATIVE_FLEET_SDK_OUTPUTS=sdk keeps the SDK's (same section)

from core.sdk_plain_urn import use_plain_urn  # noqa: E402

use_plain_urn()  # KNATIVE_FLEET_SDK_URN=sdk keeps the SDK's (same section)

from core.sdk_stack_trace import use_frame_stack_trace  # noqa: E402

use_frame_stack_trace()  # KNATIVE_FLEET_SDK_STACK=sdk keeps the SDK's (same section)

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
