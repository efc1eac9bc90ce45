"""A test stack's cleanup deletes a hold its failed run left on a spoke, and only its own."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from lab import fleet
from ownership.hold import HELD_BY_STACK_ANNOTATION


class FakeLeases:
    def __init__(self, holder: str | None) -> None:
        self.holder = holder
        self.deleted: list[str] = []

    def read_namespaced_lease(self, name, namespace, **_):
        if self.holder is None:
            raise ApiException(status=404)
        return SimpleNamespace(metadata=SimpleNamespace(
            uid="u1", annotations={HELD_BY_STACK_ANNOTATION: self.holder}))

    def delete_namespaced_lease(self, name, namespace, body, **_):
        self.deleted.append(body.preconditions.uid)


@pytest.mark.parametrize(("holder", "deleted"), [
    ("organization/knative-fleet/t-a-1@file:///s", ["u1"]),
    ("organization/knative-fleet/t-a-12@file:///s", []),
    (None, []),
])
def test_only_the_stack_s_own_hold_goes(monkeypatch, holder, deleted) -> None:
    leases = FakeLeases(holder)
    monkeypatch.setattr(client, "CoordinationV1Api", lambda api: leases)
    assert fleet.release_left_hold(object(), "/t-a-1@") is bool(deleted)
    assert leases.deleted == deleted
