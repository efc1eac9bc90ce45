"""This stack's owner identity, read at the program's edge (ownership.identity).

The id is kept in the stack's own outputs (`ownerId`). The program reads them through
the engine's built-in `pulumi:pulumi:readStackOutputs`, naming its own stack: what the
backend holds from the last run, so the id travels with the state wherever the state
goes (export and import, another backend, a moved checkout, a rename).
"""

from __future__ import annotations

import pulumi

from ownership.identity import (
    OWNER_ID_OUTPUT,
    StackIdentity,
    backend_url,
    identity_from_outputs,
    owner_name,
)

READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


def read_identity() -> StackIdentity:
    """The identity this stack's state keeps, or a new one on its first run."""
    organization, project, stack = (pulumi.get_organization(), pulumi.get_project(),
                                     pulumi.get_stack())
    name = owner_name(backend_url(), organization, project, stack)
    try:
        found = pulumi.runtime.invoke(READ_STACK_OUTPUTS,
                                      {"name": f"{organization}/{project}/{stack}"}).value
    except Exception as exc:  # noqa: BLE001 - a stack the backend does not hold yet
        pulumi.log.debug(f"no outputs of this stack to read its owner id from: {exc}")
        found = None
    return identity_from_outputs((found or {}).get("outputs"), name)


def export_identity(identity: StackIdentity) -> None:
    """Keeps the id in the stack's state for the next run."""
    pulumi.export(OWNER_ID_OUTPUT, identity.id)
