"""401 and 403 mean refused, decided in one place (core.refused) for every reader of a
spoke or the hub."""

from __future__ import annotations

import pytest
from kubernetes.client.rest import ApiException

from core.refused import is_refused


@pytest.mark.parametrize(("status", "refused"), [
    (401, True), (403, True),
    (404, False), (409, False), (429, False), (500, False), (0, False), (None, False),
])
def test_only_401_and_403_are_refusals(status: int | None, refused: bool) -> None:
    assert is_refused(ApiException(status=status, reason="x")) is refused


def test_an_error_without_an_answer_is_no_refusal() -> None:
    assert not is_refused(TimeoutError("the spoke did not answer"))
    assert not is_refused(ConnectionRefusedError(111, "connection refused"))
