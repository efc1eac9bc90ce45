"""This stack's owner identity, read at the program's edge (ownership.identity).

The id is kept in the stack's own outputs (`ownerId`). The program reads them through
the engine's built-in `pulumi:pulumi:readStackOutputs`, naming its own stack: what the
backend holds from the last run, so the id travels with the state wherever the state
goes (export and import, another backend, a moved checkout, a rename). A stack with no
outputs yet answers an empty map: that is a first run, which makes the id. Any other
answer (the engine could not read the backend, or gave no outputs) stops the run with
OutputsUnreadable before anything is changed or exported: a new id would make the stack
a stranger to the spokes it owns.

A failed read is tried again, twice, a second apart: on a file backend the engine of
this very run rewrites the checkpoint's `.attrs` companion in place while the program
starts (checkpoints are on by Pulumi's default), and a read that meets that write finds
it empty (`failed to load checkpoint: EOF`). A backend that stays unreadable fails all
three, and the run stops as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pulumi

from ownership.identity import (
    OWNER_ID_OUTPUT,
    StackIdentity,
    backend_url,
    identity_from_outputs,
    outputs_unreadable,
    owner_name,
)

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
READ_ATTEMPTS = 3
RETRY_PAUSE_S = 1.0


def stack_name() -> str:
    """This stack as the engine and the CLI name it: `organization/project/stack`."""
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"


def read_outputs() -> dict:
    """The outputs the stack's last recorded run left (an empty map: none yet); raises
    OutputsUnreadable (a BackendUnknown) when they cannot be read."""
    organization, project, stack = (pulumi.get_organization(), pulumi.get_project(),
                                     pulumi.get_stack())
    name = owner_name(backend_url(), organization, project, stack)
    found = _invoke_read(f"{organization}/{project}/{stack}", name)
    if not found.is_known:
        raise outputs_unreadable(name, "the engine answered that they are not known yet")
    outputs = found.value.get("outputs") if isinstance(found.value, dict) else None
    if not isinstance(outputs, dict):
        raise outputs_unreadable(name, f"the engine answered no outputs ({found.value!r})")
    return outputs


def _invoke_read(stack: str, name: str, attempts: int = READ_ATTEMPTS) -> Any:
    """The engine's answer to readStackOutputs for `stack`, asked again after a failure
    (module docstring); raises OutputsUnreadable with the last failure."""
    for attempt in range(1, attempts + 1):
        try:
            return pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": stack})
        except Exception as exc:  # noqa: BLE001 - whatever failed, it is no first run
            if attempt == attempts:
                raise outputs_unreadable(name, str(exc)) from None
            time.sleep(RETRY_PAUSE_S)
    raise AssertionError("unreachable")


def read_identity(outputs: dict | None = None) -> StackIdentity:
    """The identity this stack's state keeps (in `outputs`, read_outputs' answer, read
    here when not given), or a new one on its first run; raises OutputsUnreadable (a
    BackendUnknown) when the outputs cannot be read."""
    name = owner_name(backend_url(), pulumi.get_organization(), pulumi.get_project(),
                      pulumi.get_stack())
    return identity_from_outputs(read_outputs() if outputs is None else outputs, name)


def export_identity(identity: StackIdentity,
                    export: Callable[[str, object], None] | None = None) -> None:
    """Keeps the id in the stack's state for the next run (`export`: pulumi.export unless
    given; the package's Fleet returns it as its output `ownerId`, which its program
    exports under that name)."""
    (export or pulumi.export)(OWNER_ID_OUTPUT, identity.id)
