"""The owner guard's delete (`components.owner_guard` says why the guard exists): read
the owner record on each anchor of the install and refuse while one names another
stack (ownership.records). A record of this stack, or an anchor that is not there
(NotFound), lets the delete go on. Anything else fails closed: a spoke that answers
429, 5xx or not at all, or refuses the read, keeps its install, and the message names
the way out for a spoke that is gone for good."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubernetes.client.rest import ApiException

from access.spoke_client import spoke_client
from access.spoke_facts import read_anchor
from core.refused import is_refused
from ownership.errors import OwnedByAnotherStack, OwnerUnknown
from ownership.identity import StackIdentity
from ownership.records import Record, others, record_of
from ownership.refusals import delete_refusal, unknown_refusal, unreadable_refusal

if TYPE_CHECKING:
    from fleet.plan import OwnerGuard

__all__ = ["OwnedByAnotherStack", "OwnerUnknown", "check_owner", "guard_identity",
           "guard_inputs", "read_records"]


def guard_inputs(guard: OwnerGuard, spoke: str, spoke_urn: Any, connection: Any,
                 plugin_timeout_s: float) -> dict[str, Any]:
    """The inputs of the spoke's owner guard, what its delete reads: the one definition
    the registrar (components.spoke) and the offline review both use. `spoke_urn`: the
    URN its refusal names (None under a parent component: the engine then leaves it out)."""
    return {"id": guard.name, "spoke": spoke, "owner": guard.owner, "ownerId": guard.owner_id,
            "anchors": sorted(guard.anchors), "spokeUrn": spoke_urn,
            "connection": connection, "pluginTimeoutSeconds": plugin_timeout_s}


def guard_identity(props: dict[str, Any]) -> StackIdentity:
    """The stack the guard was registered by. A guard of an install recorded before
    owner ids has its name only; a name is one stack on its backend, so the guard
    accepts a record naming it whatever id the record carries."""
    return StackIdentity(str(props.get("ownerId") or ""), str(props.get("owner") or ""),
                         saved=False)


def read_records(props: dict[str, Any]) -> tuple[dict[str, Record | None], list[str]]:
    """({anchor: its record, None when the anchor or its record is not there},
    [anchors the identity may not read]); raises OwnerUnknown on any other error."""
    records: dict[str, Record | None] = {}
    refused: list[str] = []
    timeout = float(props.get("pluginTimeoutSeconds") or 30)
    spoke = props.get("spoke") or ""
    try:
        with spoke_client(props["connection"], timeout) as api:
            for anchor in props.get("anchors") or []:
                namespace, name = anchor.split("/", 1)
                try:
                    annotations = read_anchor(api, namespace, name)
                except ApiException as exc:
                    if not is_refused(exc):
                        raise
                    refused.append(anchor)
                    continue
                records[anchor] = record_of(annotations)
    except Exception as exc:  # noqa: BLE001 - fail closed: nothing is deleted
        what = (f"HTTP {exc.status} {exc.reason}" if isinstance(exc, ApiException)
                else f"{type(exc).__name__}: {exc}")
        raise OwnerUnknown(unknown_refusal(spoke, what, "nothing on the spoke was deleted",
                                           props.get("spokeUrn"))) from exc
    return records, refused


def check_owner(props: dict[str, Any]) -> None:
    """The guard's delete: raises OwnedByAnotherStack while another stack's record is on
    an anchor of the install, OwnerUnknown while a record cannot be read."""
    records, refused = read_records(props)
    spoke, urn = props.get("spoke") or "", props.get("spokeUrn")
    me = guard_identity(props)
    foreign = others(records, me)
    if foreign:
        raise OwnedByAnotherStack(delete_refusal(spoke, foreign, me, urn))
    refusal = unreadable_refusal(spoke, refused, urn)
    if refusal is not None:
        raise OwnedByAnotherStack(refusal)
