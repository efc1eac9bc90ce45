"""Which typed resources of objects a step now holds this run registers
(fleet.held_typed says why), read at the program's edge: from the stack's last outputs,
and only when they do not say `typedHeld`, from its state (`pulumi stack export`, no
secrets shown), before anything is registered.

A state that cannot be read stops the run before it changes anything: letting go of a
typed resource the state would delete deletes it from the spoke (a CRD with every custom
resource of its kind; a ClusterRole a controller runs with).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import Any

from components.stack_identity import stack_name
from fleet.held_typed import state_needs_reading, typed_deleted_with_state
from ownership.identity import BackendUnknown

EXPORT_TIMEOUT_S = 300
READ_ATTEMPTS = 3
RETRY_PAUSE_S = 1.0


class StateUnreadable(BackendUnknown):
    """The stack's state could not be read to tell which typed resources it holds."""


def export_command(stack: str) -> list[str]:
    """`pulumi stack export` of `stack`, by the CLI on PATH (the one running this run)."""
    return [shutil.which("pulumi") or "pulumi", "stack", "export", "--stack", stack]


def read_state(stack: str, cwd: str | None = None, attempts: int = READ_ATTEMPTS
               ) -> dict[str, Any]:
    """The stack's last state as `pulumi stack export` gives it, read again after a
    failure (a file backend's read that meets another run's checkpoint write finds its
    `.attrs` companion empty: `failed to load checkpoint: EOF`); raises StateUnreadable."""
    for attempt in range(1, attempts + 1):
        try:
            return _read_state_once(stack, cwd)
        except StateUnreadable:
            if attempt == attempts:
                raise
            time.sleep(RETRY_PAUSE_S)
    raise AssertionError("unreachable")


def _read_state_once(stack: str, cwd: str | None) -> dict[str, Any]:
    why = ""
    try:
        proc = subprocess.run(export_command(stack), cwd=cwd or os.getcwd(),
                              capture_output=True, text=True, check=False,
                              timeout=EXPORT_TIMEOUT_S)
        if proc.returncode == 0:
            document = json.loads(proc.stdout or "{}")
            if isinstance(document, dict):
                return document
            why = "it is not a JSON object"
        else:
            why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    raise StateUnreadable(
        f"cannot read the state of stack {stack} (`pulumi stack export --stack {stack}`): "
        f"{why}. The run reads it once, to know which objects its steps now hold (CRDs, "
        "RBAC, ServiceAccounts, Services, ...) the state still holds as typed resources "
        "that the engine would delete, and stopped "
        "before changing anything. Fix: make `pulumi stack export --stack "
        f"{stack}` work from the project directory (the `pulumi` on PATH, logged in to the "
        "stack's backend), then run again.")


def typed_to_register(last_outputs: dict[str, Any]) -> dict[str, frozenset[str]]:
    """{spoke: fleet.held_typed.typed_key of each} of the typed resources of held
    objects this run registers, kept on delete."""
    if not state_needs_reading(last_outputs):
        return {}
    return typed_deleted_with_state(read_state(stack_name()))
