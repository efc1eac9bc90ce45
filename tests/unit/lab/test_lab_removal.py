"""Namespaces are gone before any CRD is deleted; a namespace that stays is reported
with what the namespace controller says about it; a CRD the API server's finalizer
dropped is nudged."""

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
        return SimpleNamespace(items=[_crd(n) for n in self.crds])


class DroppedCrd(FakeCluster):
    """One CRD the finalizer dropped: Terminating with InstanceDeletionFailed until
    anything else about it changes."""

    def __init__(self) -> None:
        super().__init__([], ["eventtransforms.eventing.knative.dev"])
        self.patches: list[tuple[str, dict]] = []
        self.deleted: set[str] = set()

    def delete_custom_resource_definition(self, name: str) -> None:
        self.deleted.add(name)

    def patch_custom_resource_definition(self, name: str, body: dict) -> None:
        self.patches.append((name, body))

    def list_custom_resource_definition(self) -> SimpleNamespace:
        if self.patches:
            self.crds.clear()
        return SimpleNamespace(items=[_crd(n, terminating=n in self.deleted,
                                           reason="InstanceDeletionFailed")
                                      for n in self.crds])


def _crd(name: str, terminating: bool = False, reason: str | None = None) -> SimpleNamespace:
    """A CRD as the client returns it (the fields removal.py reads): Terminating with
    `reason` when one is given."""
    conds = [SimpleNamespace(type="Terminating", status="True", reason=reason,
                             message="could not list instances")] if reason else []
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name, deletion_timestamp="2026-11-26T10:25:08Z"
                                 if terminating else None,
                                 finalizers=[FINALIZER] if terminating else None),
        status=SimpleNamespace(conditions=conds))


FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


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


def test_a_crd_the_finalizer_dropped_is_nudged(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = DroppedCrd()
    monkeypatch.setattr(removal.client, "ApiextensionsV1Api", lambda api: fake)
    monkeypatch.setattr("lab.wait.time.sleep", lambda s: None)
    removal.delete_crds(None, ["eventtransforms.eventing.knative.dev"], timeout=5)
    assert [name for name, _ in fake.patches] == ["eventtransforms.eventing.knative.dev"]
    assert removal.NUDGE in fake.patches[0][1]["metadata"]["annotations"]


def test_a_crd_that_stays_is_reported_with_what_holds_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = DroppedCrd()
    fake.patch_custom_resource_definition = lambda name, body: None  # the nudge does not help
    monkeypatch.setattr(removal.client, "ApiextensionsV1Api", lambda api: fake)
    monkeypatch.setattr("lab.wait.time.sleep", lambda s: None)
    with pytest.raises(WaitTimeout) as err:
        removal.delete_crds(None, ["eventtransforms.eventing.knative.dev"], timeout=0)
    assert str(err.value).endswith(
        "still there: eventtransforms.eventing.knative.dev (finalizers: "
        f"{FINALIZER}; Terminating: InstanceDeletionFailed: could not list instances)")


def test_a_crd_still_deleting_normally_is_not_touched() -> None:
    assert not removal.dropped_by_finalizer(
        _crd("a.example.com", terminating=True, reason="InstanceDeletionInProgress"))
    assert not removal.dropped_by_finalizer(_crd("a.example.com", reason="InstanceDeletionFailed"))
    assert removal.dropped_by_finalizer(
        _crd("a.example.com", terminating=True, reason="InstanceDeletionFailed"))
