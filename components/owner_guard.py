"""The delete side of one owner per spoke: a stack never deletes an install another
stack now owns.

The planner refuses, in preview and `up`, a spoke whose anchors record another owner
(fleet.spokes `owner_refusal`). A delete never asks it: `pulumi destroy` does not run
the program, and an `up` that no longer registers a spoke deletes the spoke's
resources after the program ran. Two stacks that both installed a spoke before the
records existed, a state restored from a backup or a copied state would each still
delete an install the record gives to another stack.

So each spoke gets `SpokeOwnerGuard`, registered after everything of the spoke and
depending on all of it: Pulumi deletes it first, and while its delete fails deletes
nothing it depends on. Create, update and diff only record the inputs. Its delete reads
the owner record on each anchor of the install and refuses (access.owner_records) when
one names another stack; a record of this stack, none, or no anchor lets the delete go
on, and so does a spoke that cannot be reached, so a dead cluster can still be removed
(its objects' own deletes then fail or are skipped as before). It holds how to reach
the spoke (no credential: the exec plugin runs at delete time), marked secret like the
provider's kubeconfig.

The reads load the Kubernetes client only when a delete runs, as
`components.aggregated_role_guard` explains: every preview starts the dynamic provider
and loads this module.
"""

from __future__ import annotations

import sys
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ResourceProvider, UpdateResult

# What a change of makes the guard's recorded inputs (the ones its delete uses) stale.
DIFF_KEYS = ("spoke", "owner", "anchors", "connection", "pluginTimeoutSeconds")


class OwnedByAnotherStack(Exception):
    """The install's record names another stack; `str()` names the spoke and the fix."""


def read_records(props: dict[str, Any]) -> tuple[dict[str, str | None], list[str]] | None:
    """({anchor: the owner it records, or None}, [anchors the identity may not read]);
    None when the spoke cannot be reached (the plugin fails, no connection, the API
    server does not answer)."""
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError

    from access.spoke_client import spoke_client
    from access.spoke_facts import read_anchor
    from core.errors import FleetError
    from knative.manifests import OWNER_ANNOTATION

    records: dict[str, str | None] = {}
    refused: list[str] = []
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    try:
        with spoke_client(props["connection"], timeout) as api:
            for anchor in props.get("anchors") or []:
                namespace, name = anchor.split("/", 1)
                try:
                    annotations = read_anchor(api, namespace, name)
                except ApiException as exc:
                    if exc.status not in (401, 403):
                        raise
                    refused.append(anchor)
                    continue
                records[anchor] = (annotations or {}).get(OWNER_ANNOTATION)
    except (FleetError, ApiException, HTTPError, OSError) as exc:
        # The dynamic provider has no engine connection: its stderr is the engine's log.
        print(f"warning: spoke {props.get('spoke')!r}: cannot be reached to read its owner "
              f"record ({type(exc).__name__}: {exc}); its delete goes on, as for a spoke "
              "that is gone", file=sys.stderr, flush=True)
        return None
    return records, refused


def check_owner(props: dict[str, Any]) -> None:
    """The guard's delete: raises OwnedByAnotherStack while another stack's record is on
    an anchor of the install (or a record cannot be read on a spoke that answers)."""
    from access.owner_records import delete_refusal, unreadable_refusal

    read = read_records(props)
    if read is None:
        return
    records, refused = read
    spoke, urn = props.get("spoke") or "", props.get("spokeUrn")
    refusal = (delete_refusal(spoke, props["owner"], records, urn)
               or unreadable_refusal(spoke, refused, urn))
    if refusal is not None:
        raise OwnedByAnotherStack(refusal)


class _Provider(ResourceProvider):
    """Create and update record the inputs; only delete talks to the spoke."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(id_=str(props["id"]), outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [k for k in DIFF_KEYS if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(outs=news)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        try:
            check_owner(props)
        except OwnedByAnotherStack:
            raise
        except Exception as exc:  # noqa: BLE001 - reported with the spoke and the way on
            raise RuntimeError(
                f"spoke {props.get('spoke')!r}: could not check the owner record before "
                f"deleting its install: {type(exc).__name__}: {exc}; nothing on the spoke "
                "was deleted. Fix: make sure the spoke and the hub are reachable (the "
                "access provider's plugin runs for this step), then run the command "
                "again") from exc


class SpokeOwnerGuard(pulumi.dynamic.Resource, module="knative-fleet", name="SpokeOwnerGuard"):
    """Deleted before everything of its spoke (see the module docstring)."""

    def __init__(self, name: str, *, spoke: str, owner: str, anchors: list[str],
                 spoke_urn: pulumi.Input[str] | None, connection: dict[str, Any],
                 plugin_timeout_s: float, opts: pulumi.ResourceOptions) -> None:
        super().__init__(
            _Provider(), name,
            {"id": name, "spoke": spoke, "owner": owner, "anchors": sorted(anchors),
             "spokeUrn": spoke_urn, "connection": pulumi.Output.secret(connection),
             "pluginTimeoutSeconds": plugin_timeout_s},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
