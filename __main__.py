"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

from core.profiling import profile_if_asked

profile_if_asked()  # KNATIVE_FLEET_PROFILE=FILE: the program's CPU profile (docs/settings.md)

from sdk_speedups.runtime import use_program_runtime  # noqa: E402

use_program_runtime()  # each part can be turned off (docs/settings.md)

import pulumi  # noqa: E402 - imported inside the profile when one is asked for

from access.inventory import HubInventory  # noqa: E402
from components.fleet import register_fleet  # noqa: E402
from config.fleet import CONFIG_NAMESPACE, parse_fleet_config  # noqa: E402
from config.stack_config import read_stack_config  # noqa: E402
from config.stack_owner import program_owner  # noqa: E402
from core.errors import ConfigError  # noqa: E402
from core.settings import settings  # noqa: E402
from fleet import plan_fleet  # noqa: E402

try:
    cfg = parse_fleet_config(read_stack_config(pulumi.Config(CONFIG_NAMESPACE).get))
    plan = plan_fleet(cfg, HubInventory.of(cfg), owner=program_owner(),
                      approved=settings().approved_waves)
except ConfigError as exc:
    raise pulumi.RunError(str(exc)) from None
register_fleet(plan)
