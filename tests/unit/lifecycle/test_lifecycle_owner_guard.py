"""The owner guard's delete step: it refuses while another stack's record is on an
anchor of the install (or the identity may not read one on a spoke that answers), and
lets the delete go on for this stack's record, no record, or a spoke it cannot reach."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from kubernetes.client.rest import ApiException
from urllib3.exceptions import MaxRetryError

from access import spoke_client as spoke_access
from config.stack_owner import owner_identity
from core.errors import ProfileError
from core.reasons import Reason
from lifecycle import owner_guard
from tests.support.factories import spoke_connection

ME = owner_identity("file:///state", "organization", "knative-fleet", "prod")
OTHER = owner_identity("file:///state", "organization", "knative-fleet", "copy")
SERVING = "knative-serving/knativeserving-knative-serving-root-owner"
EVENTING = "knative-eventing/knativeeventing-knative-eventing-root-owner"


def props(*anchors: str) -> dict[str, Any]:
    return {"id": "spoke-1:owner-record", "spoke": "spoke-1", "owner": ME,
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
    spoke_with(monkeypatch, {SERVING: {"knative-fleet.dev/owner": ME},
                             EVENTING: {"knative-fleet.dev/owner": OTHER}})
    with pytest.raises(owner_guard.OwnedByAnotherStack) as refused:
        delete(props(SERVING, EVENTING))
    message = str(refused.value)
    assert message.startswith("spoke 'spoke-1': ")
    assert f"stack '{OTHER}' manages this spoke" in message
    assert "pulumi state delete --target-dependents 'urn:x::Spoke::spoke-1'" in message
    assert "python -m operations hand-over --spoke spoke-1" in message


@pytest.mark.parametrize("anchor", [
    {"knative-fleet.dev/owner": ME},
    {"operator.knative.dev/anchor": "true"},  # no record: installed before records
    None,  # no anchor, or no namespace: the API answers 404 for both
])
def test_this_stacks_record_or_none_lets_the_delete_go_on(
        monkeypatch: pytest.MonkeyPatch, anchor: dict | None) -> None:
    reads = spoke_with(monkeypatch, {SERVING: anchor})
    delete(props(SERVING))
    assert reads == [tuple(SERVING.split("/"))]


@pytest.mark.parametrize("failure", [
    ProfileError(Reason.ACCESS_PROVIDER_FAILED, "secret fleet-system/spoke-1 not found"),
    MaxRetryError(None, "/api", "connection refused"),  # type: ignore[arg-type]
    TimeoutError("timed out"),
])
def test_a_spoke_it_cannot_reach_does_not_block_its_removal(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        failure: Exception) -> None:
    spoke_with(monkeypatch, {}, enter=failure)
    delete(props(SERVING))
    err = capsys.readouterr().err
    assert "spoke 'spoke-1': cannot be reached to read its owner record" in err
    assert "its delete goes on" in err


def test_an_api_server_that_does_not_answer_is_unreachable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    spoke_with(monkeypatch, {SERVING: ApiException(status=503)})
    delete(props(SERVING))
    assert "cannot be reached" in capsys.readouterr().err


def test_a_refused_read_refuses_the_delete(monkeypatch: pytest.MonkeyPatch) -> None:
    spoke_with(monkeypatch, {SERVING: ApiException(status=403)})
    with pytest.raises(owner_guard.OwnedByAnotherStack, match="may not get configmaps in "
                       "knative-serving"):
        delete(props(SERVING))
