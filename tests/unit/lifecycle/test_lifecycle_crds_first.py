"""The CRDs-first step: each CRD server-side applied with the fleet's field manager,
forced, then awaited until Established; a failure names the spoke and the CRDs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fleet import crds_first
from lifecycle import crds_first as step

SPEC = client.V1CustomResourceDefinitionSpec(
    group="x", scope="Cluster", versions=[],
    names=client.V1CustomResourceDefinitionNames(kind="A", plural="a"))
ESTABLISHED = [client.V1CustomResourceDefinitionCondition(type="NamesAccepted", status="True"),
               client.V1CustomResourceDefinitionCondition(type="Established", status="True")]


class FakeExtensions:
    """The apiextensions API of one spoke: `late` CRDs are Established after that many
    reads; `fail` makes every apply fail with that status; `unlisted` CRDs are missing
    from a list's answer (a label another manager took off)."""

    def __init__(self, late: dict[str, int] | None = None, fail: int | None = None,
                 unlisted: tuple[str, ...] = (), list_fail: int | None = None) -> None:
        self.late = dict(late or {})
        self.fail = fail
        self.list_fail = list_fail
        self.unlisted = unlisted
        self.applied: list[tuple[str, dict, dict]] = []
        self.reads: list[str] = []
        self.lists: list[str] = []

    def _crd(self, name: str) -> client.V1CustomResourceDefinition:
        """The CRD as the client returns it (its model), Established unless late."""
        late = self.late.get(name, 0) > 0
        if late:
            self.late[name] -= 1
        return client.V1CustomResourceDefinition(
            metadata=client.V1ObjectMeta(name=name), spec=SPEC,
            status=client.V1CustomResourceDefinitionStatus(
                conditions=[] if late else ESTABLISHED))

    def patch_custom_resource_definition(self, name: str, body: dict,
                                         **kw: Any) -> client.V1CustomResourceDefinition:
        if self.fail:
            raise ApiException(status=self.fail, reason="Forbidden")
        self.applied.append((name, body, kw))
        return self._crd(name)

    def list_custom_resource_definition(self, label_selector: str,
                                        **_: Any) -> client.V1CustomResourceDefinitionList:
        """The applied CRDs whose labels hold every `k=v` of the selector."""
        self.lists.append(label_selector)
        if self.list_fail:
            raise ApiException(status=self.list_fail, reason="Forbidden")
        wanted = set(label_selector.split(","))
        return client.V1CustomResourceDefinitionList(items=[
            self._crd(name) for name, body, _ in self.applied
            if name not in self.unlisted
            and wanted <= {f"{k}={v}" for k, v in body["metadata"].get("labels", {}).items()}])

    def read_custom_resource_definition(self, name: str,
                                        **_: Any) -> client.V1CustomResourceDefinition:
        self.reads.append(name)
        return self._crd(name)


RELEASE = {"knative.dev/crd-install": "true", "app.kubernetes.io/name": "knative-serving"}


def _body(name: str, labels: dict[str, str] | None = None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": meta, "spec": {"group": "x"}}


def test_each_crd_is_applied_by_the_fleet_forced() -> None:
    ext = FakeExtensions()
    names = step.apply_all(ext, [_body("a.x"), _body("b.x")], sleep=lambda _: None)
    assert names == ["a.x", "b.x"]
    assert [(n, kw["field_manager"], kw["force"], kw["_content_type"])
            for n, _, kw in ext.applied] == [
        ("a.x", "knative-fleet", True, "application/apply-patch+yaml"),
        ("b.x", "knative-fleet", True, "application/apply-patch+yaml")]
    assert ext.applied[0][1] == _body("a.x")
    assert ext.reads == []  # Established in the apply's answer


def test_a_crd_not_yet_established_is_awaited() -> None:
    ext = FakeExtensions(late={"b.x": 3})  # the apply and two reads see it pending
    step.apply_all(ext, [_body("a.x"), _body("b.x")], sleep=lambda _: None)
    assert ext.reads == ["b.x", "b.x", "b.x"]
    assert ext.lists == []  # no label they share: nothing to list them by


def test_a_releases_crds_are_awaited_with_one_list_per_poll() -> None:
    ext = FakeExtensions(late={"a.x": 2, "b.x": 3})
    bodies = [_body("a.x", {**RELEASE, "only": "a"}), _body("b.x", RELEASE)]
    step.apply_all(ext, bodies, sleep=lambda _: None)
    selector = "app.kubernetes.io/name=knative-serving,knative.dev/crd-install=true"
    assert ext.lists == [selector] * 3  # the apply and two lists see b.x pending
    assert ext.reads == []


def test_a_crd_the_list_does_not_hold_is_read() -> None:
    ext = FakeExtensions(late={"a.x": 2, "b.x": 1}, unlisted=("b.x",))
    step.apply_all(ext, [_body("a.x", RELEASE), _body("b.x", RELEASE)], sleep=lambda _: None)
    assert len(ext.lists) == 2 and ext.reads == ["b.x"]


def test_the_shared_labels_select_only_what_every_crd_carries() -> None:
    assert step.shared_labels([_body("a.x", {**RELEASE, "v": "1"}),
                               _body("b.x", {**RELEASE, "v": "2"})]) == (
        "app.kubernetes.io/name=knative-serving,knative.dev/crd-install=true")
    assert step.shared_labels([_body("a.x", RELEASE), _body("b.x")]) == ""
    assert step.shared_labels([]) == ""


def test_a_crd_never_established_fails_naming_it() -> None:
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    ext = FakeExtensions(late={"b.x": 10**6})
    with pytest.raises(step.CrdsNotApplied, match=r"not Established after 2 s: b\.x"):
        step.apply_all(ext, [_body("a.x"), _body("b.x")], timeout_s=2, clock=lambda: now[0],
                       sleep=sleep)


@pytest.fixture
def spoke(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"ext": FakeExtensions()}

    @contextlib.contextmanager
    def fake_client(connection: dict, timeout: float) -> Iterator[str]:
        seen["connection"], seen["timeout"] = connection, timeout
        yield "api"

    monkeypatch.setattr(step, "spoke_client", fake_client)
    monkeypatch.setattr(step.client, "ApiextensionsV1Api", lambda api: seen["ext"])
    return seen


def _props(bodies: list[dict]) -> dict[str, Any]:
    _, manifest = crds_first.encode(bodies)
    return {"id": "spoke-1:knative-serving/crds-first", "spoke": "spoke-1",
            "crds": [b["metadata"]["name"] for b in bodies], "manifest": manifest,
            "connection": {"server": "https://spoke-1"}, "pluginTimeoutSeconds": 7}


def test_the_step_applies_the_manifest_through_the_spokes_connection(spoke) -> None:
    assert step.apply_crds(_props([_body("a.x")])) == ["a.x"]
    assert spoke["connection"] == {"server": "https://spoke-1"} and spoke["timeout"] == 7.0
    assert [n for n, *_ in spoke["ext"].applied] == ["a.x"]


def test_a_refused_apply_fails_closed_naming_the_spoke(spoke) -> None:
    spoke["ext"] = FakeExtensions(fail=403)
    with pytest.raises(step.CrdsNotApplied) as got:
        step.apply_crds(_props([_body("a.x"), _body("b.x")]))
    text = str(got.value)
    assert text.startswith("spoke 'spoke-1': could not apply the CustomResourceDefinitions "
                           "a.x, b.x before their resources: ApiException")
    assert "run the command again" in text


def test_a_refused_list_fails_closed_naming_the_spoke(spoke) -> None:
    spoke["ext"] = FakeExtensions(late={"a.x": 2}, list_fail=403)
    with pytest.raises(step.CrdsNotApplied, match=r"^spoke 'spoke-1': .*ApiException.*403"):
        step.apply_crds(_props([_body("a.x", RELEASE)]))
    assert spoke["ext"].lists and not spoke["ext"].reads  # no read in the list's place


def test_a_crd_without_status_or_conditions_is_not_established() -> None:
    crd = client.V1CustomResourceDefinition(spec=SPEC)
    assert not step.established(crd)
    crd.status = client.V1CustomResourceDefinitionStatus(conditions=None)
    assert not step.established(crd)
