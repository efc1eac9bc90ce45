"""The owner guard's delete step: it refuses while another stack's record is on an
anchor of the install (or the identity may not read one), fails closed while a record
cannot be read (429, 5xx, a timeout, a spoke that does not answer), and lets the delete
go on for this stack's record, no record, or no anchor."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from kubernetes.client.rest import ApiException
from urllib3.exceptions import MaxRetryError

from access import spoke_client as spoke_access
from core.errors import ProfileError
from core.names import OWNER_ANNOTATION, OWNER_ID_ANNOTATION
from core.reasons import Reason
from lifecycle import owner_guard
from ownership.identity import owner_name
from tests.support.factories import spoke_connection

ME = owner_name("file:///state", "organization", "knative-fleet", "prod")
ME_ID = "kf-" + "1" * 32
OTHER = owner_name("file:///state", "organization", "knative-fleet", "copy")
OTHER_ID = "kf-" + "2" * 32
SERVING = "knative-serving/knativeserving-knative-serving-root-owner"
EVENTING = "knative-eventing/knativeeventing-knative-eventing-root-owner"


def record(name: str, owner_id: str | None = None) -> dict[str, str]:
    return {OWNER_ANNOTATION: name, **({OWNER_ID_ANNOTATION: owner_id} if owner_id else {})}


def props(*anchors: str) -> dict[str, Any]:
    return {"id": "spoke-1:owner-record", "spoke": "spoke-1", "owner": ME, "ownerId": ME_ID,
            "anchors": list(anchors), "spokeUrn": "urn:x::Spoke::spoke-1",
            "connection": spoke_access.connection_props(spoke_connection()),
            "pluginTimeoutSeconds": 5}


def spoke_with(monkeypatch: pytest.MonkeyPatch, anchors: dict[str, Any],
               enter: Exception | None = None) -> list[tuple[str, str]]:
    """The spoke as the delete step reads it: {"namespace/name": annotations, None (no
    such anchor) or an exception to raise}; `enter`: reaching the spoke fails so."""
    reads: list[tuple[str, str]] = []

    @contextlib.contextmanager
    def client(connection: dict, timeout: float):
        if enter is not None:
            raise enter
        yield object()

    def read_anchor(_api: Any, namespace: str, name: str) -> dict | None:
        reads.append((namespace, name))
        found = anchors.get(f"{namespace}/{name}")
        if isinstance(found, Exception):
            raise found
        return found

    monkeypatch.setattr(owner_guard, "spoke_client", client)
    monkeypatch.setattr(owner_guard, "read_anchor", read_anchor)
    return reads


def delete(p: dict[str, Any]) -> None:
    owner_guard.check_owner(p)


def test_another_stacks_record_refuses_the_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    spoke_with(monkeypatch, {SERVING: record(ME, ME_ID), EVENTING: record(OTHER, OTHER_ID)})
    with pytest.raises(owner_guard.OwnedByAnotherStack) as refused:
        delete(props(SERVING, EVENTING))
    message = str(refused.value)
    assert message.startswith("spoke 'spoke-1': ")
    assert f"stack '{OTHER} (owner id {OTHER_ID})' manages this spoke" in message
    assert "pulumi state delete --target-dependents 'urn:x::Spoke::spoke-1'" in message
    assert "python -m operations hand-over --spoke spoke-1" in message


def test_a_record_of_another_id_under_this_name_on_another_backend_refuses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = owner_name("file:///other-state", "organization", "knative-fleet", "prod")
    spoke_with(monkeypatch, {SERVING: record(elsewhere, OTHER_ID)})
    with pytest.raises(owner_guard.OwnedByAnotherStack):
        delete(props(SERVING))


@pytest.mark.parametrize("anchor", [
    record(ME, ME_ID),
    # this stack moved to another backend: its id is the same, its name is not
    record(owner_name("file:///moved", "organization", "knative-fleet", "prod"), ME_ID),
    record(ME),  # recorded before owner ids: the name alone
    {"operator.knative.dev/anchor": "true"},  # no record: installed before records
    None,  # no anchor, or no namespace: the API answers 404 for both
])
def test_this_stacks_record_or_none_lets_the_delete_go_on(
        monkeypatch: pytest.MonkeyPatch, anchor: dict | None) -> None:
    reads = spoke_with(monkeypatch, {SERVING: anchor})
    delete(props(SERVING))
    assert reads == [tuple(SERVING.split("/"))]


def test_a_guard_recorded_before_owner_ids_judges_by_name(
        monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = {k: v for k, v in props(SERVING).items() if k != "ownerId"}
    spoke_with(monkeypatch, {SERVING: record(ME)})
    owner_guard.check_owner(legacy)
    spoke_with(monkeypatch, {SERVING: record(OTHER)})
    with pytest.raises(owner_guard.OwnedByAnotherStack):
        owner_guard.check_owner(legacy)


@pytest.mark.parametrize("failure", [
    ProfileError(Reason.ACCESS_PROVIDER_FAILED, "secret fleet-system/spoke-1 not found"),
    MaxRetryError(None, "/api", "connection refused"),  # type: ignore[arg-type]
    TimeoutError("timed out"),
])
def test_a_spoke_it_cannot_reach_keeps_its_install(
        monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    spoke_with(monkeypatch, {}, enter=failure)
    with pytest.raises(owner_guard.OwnerUnknown) as refused:
        delete(props(SERVING))
    message = str(refused.value)
    assert message.startswith("spoke 'spoke-1': its owner record could not be read")
    assert "nothing on the spoke was deleted" in message
    assert "pulumi state delete --target-dependents 'urn:x::Spoke::spoke-1'" in message


@pytest.mark.parametrize("status", [429, 500, 503, 504])
def test_an_api_error_other_than_not_found_fails_closed(
        monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    spoke_with(monkeypatch, {SERVING: ApiException(status=status, reason="Unavailable")})
    with pytest.raises(owner_guard.OwnerUnknown, match=f"HTTP {status}"):
        delete(props(SERVING))


def test_a_refused_read_refuses_the_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    spoke_with(monkeypatch, {SERVING: ApiException(status=403)})
    with pytest.raises(owner_guard.OwnedByAnotherStack, match="may not get configmaps in "
                       "knative-serving"):
        delete(props(SERVING))
