"""knative-fleet: Knative Serving and Eventing on every spoke of a ClusterProfile fleet."""

from core.profiling import profile_if_asked

profile_if_asked()  # KNATIVE_FLEET_PROFILE=FILE: the program's CPU profile (docs/settings.md)

from sdk_speedups.runtime import use_program_runtime  # noqa: E402

use_program_runtime()  # each part can be turned off (docs/settings.md)

import sys  # noqa: E402

import pulumi  # noqa: E402 - imported inside the profile when one is asked for

from access.inventory import HubInventory  # noqa: E402
from components.fleet import register_fleet  # noqa: E402
from components.held_crds import typed_crds_to_register  # noqa: E402
from components.reviewed import plan_held_to_review  # noqa: E402
from components.stack_identity import export_identity, read_identity, read_outputs  # noqa: E402
from config.fleet import CONFIG_NAMESPACE, parse_fleet_config  # noqa: E402
from config.stack_config import read_stack_config  # noqa: E402
from core.errors import ConfigError  # noqa: E402
from fleet import plan_fleet  # noqa: E402
from ownership.hold import run_holds  # noqa: E402
from ownership.identity import BackendUnknown  # noqa: E402


def warn(line: str) -> None:
    """From the holds' renewing thread: stderr, which the engine shows."""
    print(f"warning: {line}", file=sys.stderr, flush=True)


try:
    cfg = parse_fleet_config(read_stack_config(pulumi.Config(CONFIG_NAMESPACE).get))
    last_outputs = read_outputs()
    owner = read_identity(last_outputs)
    # Before anything is registered: the typed CRDs an earlier release's state holds
    # (fleet.held_crds); reads the state only when the last outputs do not say.
    typed_crds = typed_crds_to_register(last_outputs)
    # Only a run that changes spokes holds them (ownership.hold); a preview changes nothing.
    holds = None if pulumi.runtime.is_dry_run() else run_holds(owner, warn)
    inventory = HubInventory.of(cfg)
    # KNATIVE_FLEET_REVIEWED: only the reviewed plan registers, and a stale review is
    # refused before any hold is taken (components.reviewed).
    plan = plan_held_to_review(
        lambda held: plan_fleet(cfg, inventory, owner=owner, holds=held), holds)
except (ConfigError, BackendUnknown) as exc:
    raise pulumi.RunError(str(exc)) from None
export_identity(owner)
register_fleet(plan, on_recorded=holds.release if holds else None, typed_crds=typed_crds)
