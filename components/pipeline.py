"""The fleet's one pipeline, behind both entry points (the Python program, `__main__.py`,
and the package's `Fleet` component, components.fleet_component): the stack's
`knative-fleet:` config validated, the stack's owner identity, the holds, the inventory,
the reviewed plan, then the fleet registered. Neither entry point adds a step of its own,
so both validate, refuse and hold alike."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pulumi

from access.inventory import HubInventory
from components.fleet import Export, register_fleet
from components.held_typed import typed_to_register
from components.reviewed import plan_held_to_review
from components.stack_identity import export_identity, read_identity, read_outputs
from config.fleet import parse_fleet_config
from core.errors import ConfigError
from fleet import plan_fleet
from fleet.held_typed import typed_kept
from ownership.hold import run_holds
from ownership.identity import BackendUnknown


def warn(line: str) -> None:
    """From the holds' renewing thread: stderr, which the engine shows."""
    print(f"warning: {line}", file=sys.stderr, flush=True)


def deploy_fleet(raw: dict[str, Any], export: Export | None = None,
                 parent: pulumi.Resource | None = None,
                 fail: Callable[[str], None] | None = None) -> None:
    """Runs the pipeline on `raw`, what a stack file says under `knative-fleet:`.
    `export(name, value)` takes each output (pulumi.export in the program); `parent`
    is the component the fleet is registered in (None in the program). Raises RunError
    naming every problem, each config path as a stack file's, before anything is
    registered; a run the plan fails after registering the reachable spokes raises it
    at the end, or hands it to `fail` (components.fleet.register_fleet)."""
    try:
        cfg = parse_fleet_config(raw)
        last_outputs = read_outputs()
        owner = read_identity(last_outputs)
        # Before anything is registered: the typed resources of objects a step now holds
        # that an earlier release's state would delete (fleet.held_typed), read only when
        # the last outputs do not say. The package is newer than typed CRDs (a stack of
        # it never held one) and keeps the objects of the other steps typed
        # (fleet.held_typed.typed_kept).
        typed_held = typed_to_register(last_outputs) if parent is None else {}
        # Only a run that changes spokes holds them (ownership.hold); a preview changes nothing.
        holds = None if pulumi.runtime.is_dry_run() else run_holds(owner, warn)
        inventory = HubInventory.of(cfg)
        # KNATIVE_FLEET_REVIEWED: only the reviewed plan registers, and a stale review is
        # refused before any hold is taken (components.reviewed).
        plan = plan_held_to_review(
            lambda held: plan_fleet(cfg, inventory, owner=owner, holds=held), holds)
        if parent is not None:
            plan = typed_kept(plan)
    except (ConfigError, BackendUnknown) as exc:
        raise pulumi.RunError(str(exc)) from None
    export_identity(owner, export)
    register_fleet(plan, on_recorded=holds.release if holds else None, export=export,
                   parent=parent, fail=fail, typed_held=typed_held,
                   last_outputs=last_outputs)
