"""Namespaces are gone before any CRD is deleted, and a namespace that stays is reported
with what the namespace controller says about it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kubernetes import client

from lab import removal
from lab.wait import WaitTimeout


class FakeCluster:
    """Namespaces that disappear `lag` lists after their delete, and CRDs; every call
    is written to `calls`."""

    def __init__(self, namespaces: list[str], crds: list[str], lag: int = 2) -> None:
        self.namespaces = {n: None for n in namespaces}
        self.crds = set(crds)
        self.lag = lag
        self.calls: list[str] = []

    def delete_namespace(self, name: str) -> None:
        self.calls.append(f"delete ns {name}")
        self.namespaces[name] = self.lag

    def list_namespace(self) -> SimpleNamespace:
        self.calls.append("list ns")
        for name, left in list(self.namespaces.items()):
            if left is not None:
                if left == 0:
                    del self.namespaces[name]
                else:
                    self.namespaces[name] = left - 1
        return SimpleNamespace(items=[_ns(n, "Terminating" if left is not None else "Active")
                                      for n, left in self.namespaces.items()])

    def delete_custom_resource_definition(self, name: str) -> None:
        self.calls.append(f"delete crd {name}")
        terminating = [n for n, left in self.namespaces.items() if left is not None]
        assert not terminating, f"a CRD was deleted while {terminating} were still there"
        self.crds.discard(name)

    def list_custom_resource_definition(self) -> SimpleNamespace:
        return SimpleNamespace(items=[SimpleNamespace(metadata=SimpleNamespace(name=n))
                                      for n in self.crds])


def _ns(name: str, phase: str) -> client.V1Namespace:
    cond = client.V1NamespaceCondition(
        type="NamespaceDeletionDiscoveryFailure", status="True", reason="DiscoveryFailed",
        message="Discovery failed for some groups")
    return client.V1Namespace(metadata=client.V1ObjectMeta(name=name),
                              status=client.V1NamespaceStatus(phase=phase, conditions=[cond]))


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    fake = FakeCluster(["pulumi-fleet", "default"], ["stacks.pulumi.com", "other.example.com"])
    monkeypatch.setattr(removal.client, "CoreV1Api", lambda api: fake)
    monkeypatch.setattr(removal.client, "ApiextensionsV1Api", lambda api: fake)
    monkeypatch.setattr("lab.wait.time.sleep", lambda s: None)
    return fake


def test_the_namespaces_are_gone_before_the_first_crd_is_deleted(cluster: FakeCluster) -> None:
    removal.delete_namespaces_then_crds(None, ("pulumi-fleet",), ["stacks.pulumi.com"])
    first_crd = cluster.calls.index("delete crd stacks.pulumi.com")
    assert cluster.calls[:first_crd].count("list ns") >= 3  # waited through the lag
    assert "pulumi-fleet" not in cluster.namespaces
    assert cluster.crds == {"other.example.com"}
    assert "default" in cluster.namespaces


def test_a_namespace_that_stays_is_reported_with_its_conditions(
        cluster: FakeCluster) -> None:
    cluster.lag = 10**9
    with pytest.raises(WaitTimeout) as err:
        removal.delete_namespaces(None, ("pulumi-fleet",), timeout=0)
    text = str(err.value)
    assert "namespaces pulumi-fleet deleted: not met" in text
    assert "pulumi-fleet (Terminating) NamespaceDeletionDiscoveryFailure=True" in text
    assert "Discovery failed for some groups" in text
    assert not any(c.startswith("delete crd") for c in cluster.calls)
