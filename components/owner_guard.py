"""The delete side of one owner per spoke: a stack never deletes an install another
stack now owns.

The planner refuses, in preview and `up`, a spoke whose anchors record another owner
(ownership.records). A delete never asks it: `pulumi destroy` does not run
the program, and an `up` that no longer registers a spoke deletes the spoke's
resources after the program ran. Two stacks that both installed a spoke before the
records existed, a state restored from a backup or a copied state would each still
delete an install the record gives to another stack.

So each spoke gets `SpokeOwnerGuard`, registered after everything of the spoke and
depending on all of it: Pulumi deletes it first, and while its delete fails deletes
nothing it depends on. Create, update and diff only record the inputs. Its delete reads
the owner record on each anchor of the install and refuses when one names another
stack; a record of this stack, or no anchor, lets the delete go on. A record that
cannot be read (429, 5xx, a timeout, a spoke that does not answer) fails the delete
closed; a spoke that is gone for good is dropped from the state instead
(docs/troubleshooting.md). It holds how to reach
the spoke (no credential: the exec plugin runs at delete time), marked secret like the
provider's kubeconfig.

The delete step itself is in `lifecycle.owner_guard`.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.dynamic_provider import GuardProvider
from core.resource_types import SPOKE_OWNER_GUARD


# Stack states name this class (`components.owner_guard._Provider`) and unpickle it to
# run the guard's delete: it keeps its module and name (components.dynamic_provider says
# why).
class _Provider(GuardProvider):
    kind = SPOKE_OWNER_GUARD

    def delete_step(self, props: dict[str, Any]) -> None:
        from lifecycle import owner_guard, webhooks_first

        owner_guard.check_owner(props)
        # The spoke's whole install goes: its webhook configurations first, while their
        # webhooks answer (lifecycle.webhooks_first; a state without WebhookConfigurationsFirst).
        webhooks_first.delete_install_configurations_or_refuse(props)

    def delete_failed(self, props: dict[str, Any], exc: Exception) -> str | None:
        from lifecycle.webhooks_first import WebhookConfigurationsLeft
        from ownership.errors import OwnershipError

        if isinstance(exc, OwnershipError | WebhookConfigurationsLeft):
            return None
        return (f"spoke {props.get('spoke')!r}: could not check the owner record before "
                f"deleting its install: {type(exc).__name__}: {exc}; nothing on the spoke "
                "was deleted. Fix: make sure the spoke and the hub are reachable (the "
                "access provider's plugin runs for this step), then run the command "
                "again")


class SpokeOwnerGuard(pulumi.dynamic.Resource, module="knative-fleet",
                      name=SPOKE_OWNER_GUARD.name):
    """Deleted before everything of its spoke (see the module docstring)."""

    def __init__(self, name: str, *, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: lifecycle.owner_guard.guard_inputs, its connection marked secret
        here."""
        super().__init__(
            _Provider(), name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
