"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

from core.profiling import profile_if_asked

profile_if_asked()  # KNATIVE_FLEET_PROFILE=FILE: the program's CPU profile (docs/settings.md)

from sdk_speedups.runtime import use_program_runtime  # noqa: E402

use_program_runtime()  # each part can be turned off (docs/settings.md)

import pulumi  # noqa: E402 - imported inside the profile when one is asked for

from components.pipeline import deploy_fleet  # noqa: E402
from config.fleet import CONFIG_NAMESPACE  # noqa: E402
from config.stack_config import read_stack_config  # noqa: E402

# The one pipeline (components.pipeline); the package's Fleet component runs it too.
deploy_fleet(read_stack_config(pulumi.Config(CONFIG_NAMESPACE).get))
