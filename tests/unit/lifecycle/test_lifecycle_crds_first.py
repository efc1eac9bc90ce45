"""The CRDs-first step: each CRD server-side applied with the fleet's field manager,
forced, then awaited until Established, a digest of the fields applied recorded per CRD;
a refresh names the CRDs whose applied fields changed or that are gone; with
`deleteOnDestroy` its delete deletes them and waits until they are gone; a failure names
the spoke and the CRDs."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from core import crd_manifest
from lifecycle import crds_first as step

SPEC = client.V1CustomResourceDefinitionSpec(
    group="x", scope="Cluster", versions=[],
    names=client.V1CustomResourceDefinitionNames(kind="A", plural="a"))
ESTABLISHED = [client.V1CustomResourceDefinitionCondition(type="NamesAccepted", status="True"),
               client.V1CustomResourceDefinitionCondition(type="Established", status="True")]
ESTABLISHED_JSON = [{"type": "Established", "status": "True"}]


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
        self.live: dict[str, dict] = {}  # name -> the CRD as JSON, managedFields included
        self.deleted: list[str] = []
        self.patched: list[tuple[str, dict]] = []
        self.lingering: dict[str, int] = {}  # name -> reads it is still there after delete

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
        if "field_manager" not in kw:  # a merge patch, not an apply
            self.patched.append((name, body))
            return self._crd(name)
        self.applied.append((name, body, kw))
        live = copy.deepcopy(body)
        live["metadata"]["managedFields"] = [{
            "manager": kw["field_manager"], "operation": "Apply",
            "fieldsV1": fields_of(body)}]
        live["metadata"]["uid"] = f"uid-{len(self.applied)}"
        self.live[name] = live
        return self._crd(name)

    def list_custom_resource_definition(self, label_selector: str, **kw: Any) -> Any:
        """The applied CRDs whose labels hold every `k=v` of the selector."""
        self.lists.append(label_selector)
        if self.list_fail:
            raise ApiException(status=self.list_fail, reason="Forbidden")
        wanted = set(label_selector.split(","))
        names = [name for name, body in self.live.items()
                 if name not in self.unlisted
                 and wanted <= {f"{k}={v}" for k, v in
                                body["metadata"].get("labels", {}).items()}]
        if kw.get("_preload_content") is False:
            return SimpleNamespace(data=json.dumps(
                {"items": [self.live[n] for n in names]}).encode())
        return client.V1CustomResourceDefinitionList(items=[self._crd(n) for n in names])

    def read_custom_resource_definition(self, name: str, **kw: Any) -> Any:
        self.reads.append(name)
        if name in self.deleted and self.lingering.get(name, 0) > 0:
            self.lingering[name] -= 1
        elif name in self.deleted or name not in self.live:
            self.live.pop(name, None)
            raise ApiException(status=404, reason="Not Found")
        if kw.get("_preload_content") is False:
            return SimpleNamespace(data=json.dumps(self.live[name]).encode())
        return self._crd(name)

    def delete_custom_resource_definition(self, name: str, **_: Any) -> None:
        if self.fail:
            raise ApiException(status=self.fail, reason="Forbidden")
        if name not in self.live or name in self.deleted:
            raise ApiException(status=404, reason="Not Found")
        self.deleted.append(name)
        if not self.lingering.get(name):
            del self.live[name]


def fields_of(body: dict) -> dict:
    """The fieldsV1 set of every field of `body` (lists owned whole)."""
    return {f"f:{k}": fields_of(v) if isinstance(v, dict) and v else {}
            for k, v in body.items()}


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
    _, manifest = crd_manifest.encode(bodies)
    return {"id": "spoke-1:knative-serving/crds-first", "spoke": "spoke-1",
            "crds": [b["metadata"]["name"] for b in bodies], "manifest": manifest,
            "connection": {"server": "https://spoke-1"}, "pluginTimeoutSeconds": 7}


def test_the_step_applies_the_manifest_through_the_spokes_connection(spoke) -> None:
    recorded = step.apply_crds(_props([_body("a.x", RELEASE), _body("b.x", RELEASE)]))
    assert spoke["connection"] == {"server": "https://spoke-1"} and spoke["timeout"] == 7.0
    assert [n for n, *_ in spoke["ext"].applied] == ["a.x", "b.x"]
    assert set(recorded["applied"]) == {"a.x", "b.x"}
    assert recorded["selector"] == step.shared_labels([_body("a.x", RELEASE)])
    assert recorded["applied"]["a.x"] != recorded["applied"]["b.x"]


def test_a_refused_apply_fails_closed_naming_the_spoke(spoke) -> None:
    spoke["ext"] = FakeExtensions(fail=403)
    with pytest.raises(step.CrdsNotApplied) as got:
        step.apply_crds(_props([_body("a.x"), _body("b.x")]))
    text = str(got.value)
    assert text.startswith("spoke 'spoke-1': could not apply the CustomResourceDefinitions "
                           "a.x, b.x: ApiException")
    assert "Nothing that needs them was registered" in text
    assert "run the command again" in text


def _applied(spoke: dict, labels: dict[str, str] | None = RELEASE) -> dict[str, Any]:
    props = _props([_body("a.x", labels), _body("b.x", labels)])
    return {k: v for k, v in props.items() if k != "manifest"} | step.apply_crds(props)


@pytest.mark.parametrize("labels", [RELEASE, None], ids=["listed", "read"])
def test_a_refresh_finds_no_drift_on_crds_as_applied(spoke, labels) -> None:
    assert step.read_drift(_applied(spoke, labels)) == []


def test_a_field_another_manager_changed_is_drift(spoke) -> None:
    props = _applied(spoke)
    live = spoke["ext"].live["a.x"]
    live["spec"]["group"] = "y"  # kubectl edit: the field leaves the fleet's set
    live["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].pop("f:group")
    live["metadata"]["managedFields"].append(
        {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:spec": {"f:group": {}}}})
    assert step.read_drift(props) == [{"name": "a.x", "change": "changed"}]


def test_a_field_others_add_beside_the_fleets_is_no_drift(spoke) -> None:
    props = _applied(spoke)
    live = spoke["ext"].live["a.x"]
    live["spec"]["conversion"] = {"webhook": {"clientConfig": {"caBundle": "Q0E="}}}
    live["metadata"]["managedFields"].append(
        {"manager": "webhook", "operation": "Update", "fieldsV1": {"f:spec": {"f:conversion": {}}}})
    live["status"] = {"conditions": ESTABLISHED_JSON}
    assert step.read_drift(props) == []


def test_a_crd_made_again_by_someone_else_is_drift(spoke) -> None:
    props = _applied(spoke)
    spoke["ext"].live["b.x"]["metadata"]["managedFields"] = [
        {"manager": "kubectl", "operation": "Apply", "fieldsV1": fields_of(_body("b.x"))}]
    assert step.read_drift(props) == [{"name": "b.x", "change": "changed"}]


def test_a_deleted_crd_is_drift(spoke) -> None:
    props = _applied(spoke)
    del spoke["ext"].live["a.x"]
    assert step.read_drift(props) == [{"name": "a.x", "change": "deleted"}]


def test_a_state_without_digests_knows_no_drift_and_reads_nothing(spoke) -> None:
    props = _applied(spoke)
    props.pop("applied")
    spoke["ext"].lists.clear()
    assert step.read_drift(props) == [] and spoke["ext"].lists == []


def test_delete_deletes_every_crd_and_waits_until_gone(spoke) -> None:
    props = _applied(spoke)
    spoke["ext"].lingering = {"a.x": 2}  # its custom resources go first
    step.delete_crds(props)
    assert spoke["ext"].deleted == ["a.x", "b.x"] and spoke["ext"].live == {}


def test_delete_of_crds_already_gone_is_fine(spoke) -> None:
    props = _applied(spoke)
    del spoke["ext"].live["a.x"]
    step.delete_crds(props)
    assert spoke["ext"].deleted == ["b.x"]


def test_a_refused_delete_fails_closed_naming_the_spoke(spoke) -> None:
    props = _applied(spoke)
    spoke["ext"].fail = 403
    with pytest.raises(step.CrdsNotApplied, match=r"(?s)^spoke 'spoke-1': could not delete the "
                       r"CustomResourceDefinitions a\.x, b\.x: ApiException.*still in the state"):
        step.delete_crds(props)


def lingering_crd() -> tuple[FakeExtensions, Callable[..., None]]:
    """CRD a.x applied and deleted, but never gone; and delete_all of it on a fake clock
    that its sleeps advance (call it with `timeout_s`)."""
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    ext = FakeExtensions()
    step.apply_all(ext, [_body("a.x")], sleep=lambda _: None)
    ext.lingering = {"a.x": 10**6}
    return ext, lambda timeout_s: step.delete_all(ext, ["a.x"], timeout_s=timeout_s,
                                                  clock=lambda: now[0], sleep=sleep)


def test_a_crd_that_never_goes_fails_its_delete_naming_it() -> None:
    ext, wait = lingering_crd()
    with pytest.raises(step.CrdsNotApplied, match=r"not deleted after 3 s: a\.x \(finalizers: "
                       r"none; Terminating: not yet\)$"):
        wait(timeout_s=3)


def test_a_crd_held_by_another_finalizer_is_named_with_it() -> None:
    """A finalizer someone else added keeps the CRD after the API server's finalizer is
    done: the error names that finalizer and the API server's last word."""
    ext, wait = lingering_crd()
    ext.live["a.x"]["metadata"]["finalizers"] = ["example.com/keep"]
    ext.live["a.x"]["status"] = {"conditions": [
        {"type": "Terminating", "status": "False", "reason": "InstanceDeletionCompleted",
         "message": "removed all instances"}]}
    with pytest.raises(step.CrdsNotApplied, match=r"a\.x \(finalizers: example\.com/keep; "
                       r"Terminating: InstanceDeletionCompleted: removed all instances\)"):
        wait(timeout_s=3)
    assert ext.patched == []  # its finalizer did not give up: no nudge


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


def test_a_crd_whose_finalizer_gave_up_is_nudged_again_while_it_stays_so() -> None:
    ext, wait = lingering_crd()
    ext.live["a.x"]["status"] = {"conditions": [
        {"type": "Terminating", "status": "True", "reason": "InstanceDeletionFailed"}]}
    with pytest.raises(step.CrdsNotApplied, match="InstanceDeletionFailed"):
        wait(timeout_s=100)
    # at 0, 30, 60 and 90 s: once in NUDGE_EVERY_S, not once a poll
    assert [n for n, _ in ext.patched] == ["a.x"] * 4


def test_a_crd_whose_finalizer_gave_up_is_nudged(spoke) -> None:
    props = _applied(spoke)
    ext = spoke["ext"]
    ext.lingering = {"a.x": 3}
    ext.live["a.x"]["status"] = {"conditions": [
        {"type": "Terminating", "status": "True", "reason": "InstanceDeletionFailed"}]}
    step.delete_crds(props)
    nudges = ext.patched
    assert [n for n, _ in nudges] == ["a.x"]
    assert step.NUDGE in nudges[0][1]["metadata"]["annotations"]
