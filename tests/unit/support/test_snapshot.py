"""The leak check's snapshot waits for the API server to collect an IPAddress whose
Service is gone, and still reports one that stays."""

from __future__ import annotations

import pytest

from tests.support import snapshot as snap

SVC = ("/Service", "knative-eventing", "broker-ingress")
IP = (snap.IP_ADDRESS, "", "10.0.0.61")


def ip(service: str, group: str = "") -> dict:
    return {"spec": {"parentRef": {"group": group, "resource": "services",
                                   "namespace": "knative-eventing", "name": service}}}


def test_an_address_is_orphaned_only_when_its_service_is_gone() -> None:
    assert snap.orphaned_ips({SVC: {}, IP: ip("broker-ingress")}) == set()
    assert snap.orphaned_ips({IP: ip("broker-ingress")}) == {IP}
    # An address another controller owns (a Gateway's, say) is not the allocator's.
    assert snap.orphaned_ips({IP: ip("gw", group="gateway.networking.k8s.io")}) == set()


def test_snapshot_waits_until_the_orphan_is_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    looks = iter([{IP: ip("broker-ingress")}, {IP: ip("broker-ingress")}, {}])
    monkeypatch.setattr(snap, "objects", lambda api: next(looks))
    assert snap.snapshot(None, settle_seconds=60, poll_seconds=0) == set()


def test_an_orphan_that_stays_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snap, "objects", lambda api: {IP: ip("broker-ingress")})
    assert snap.snapshot(None, settle_seconds=0) == {IP}
