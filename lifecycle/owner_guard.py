"""The owner guard's delete (`components.owner_guard` says why the guard exists): read
the owner record on each anchor of the install and refuse while one names another
stack. A record of this stack, none, or no anchor lets the delete go on, and so does a
spoke that cannot be reached, so a dead cluster can still be removed."""

from __future__ import annotations

import sys
from typing import Any

from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from access.owner_records import delete_refusal, unreadable_refusal
from access.spoke_client import spoke_client
from access.spoke_facts import read_anchor
from core.errors import FleetError
from core.names import OWNER_ANNOTATION


class OwnedByAnotherStack(Exception):
    """The install's record names another stack; `str()` names the spoke and the fix."""


def read_records(props: dict[str, Any]) -> tuple[dict[str, str | None], list[str]] | None:
    """({anchor: the owner it records, or None}, [anchors the identity may not read]);
    None when the spoke cannot be reached (the plugin fails, no connection, the API
    server does not answer)."""
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
    read = read_records(props)
    if read is None:
        return
    records, refused = read
    spoke, urn = props.get("spoke") or "", props.get("spokeUrn")
    refusal = (delete_refusal(spoke, props["owner"], records, urn)
               or unreadable_refusal(spoke, refused, urn))
    if refusal is not None:
        raise OwnedByAnotherStack(refusal)
