"""The cluster-RBAC step: each ClusterRole and ClusterRoleBinding server-side applied with
the fleet's field manager, forced, a digest of the fields applied recorded per `Kind/name`
from the API server's answer; a binding the API server refuses to change (422) is deleted
and applied again, any other refusal raised; a delete waits until every object is gone
and names the one still there at the deadline with its finalizers; a refresh names the
objects whose applied fields changed or that are gone; a failure names the spoke, the
objects and the way on."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from core import crd_manifest
from lifecycle import held_objects as step
from lifecycle.applied_fields import applied_digest

SUFFIXES = {"cluster_role": "ClusterRole", "cluster_role_binding": "ClusterRoleBinding"}
RELEASE = {"app.kubernetes.io/name": "knative-serving", "app.kubernetes.io/version": "1.23.0"}
ANNOTATIONS = {"pulumi.com/patchFieldManager": "knative-fleet", "pulumi.com/patchForce": "true"}


def fields_v1(body: dict) -> dict:
    """The fieldsV1 set the API server records for an apply of `body`: the metadata's
    labels and annotations one by one, `rules`, `roleRef` and `subjects` whole (RBAC's
    lists are atomic)."""
    meta = body["metadata"]
    owned: dict[str, Any] = {"f:metadata": {
        f"f:{part}": {f"f:{k}": {} for k in meta[part]}
        for part in ("labels", "annotations") if meta.get(part)}}
    owned.update({f"f:{k}": {} for k in body if k not in ("apiVersion", "kind", "metadata")})
    return owned


class FakeRbac:
    """The RbacAuthorizationV1Api of one spoke, by `Kind/name`: an apply answers the live
    object (uid, resourceVersion and the fleet's managedFields entry added); `fail` makes
    every apply and delete fail with that status; `refuse` maps a key to the status its
    next apply fails with; `lingering` keeps a deleted object that many reads."""

    def __init__(self, fail: int | None = None) -> None:
        self.fail = fail
        self.refuse: dict[str, int] = {}
        self.live: dict[str, dict] = {}
        self.lingering: dict[str, int] = {}
        self.calls: list[tuple[str, str]] = []  # (verb, key)
        self.applied: list[tuple[str, dict, dict]] = []  # (key, body, keywords)
        self.lists: list[tuple[str, str]] = []  # (kind, selector)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        verb, _, suffix = method.partition("_")
        if suffix not in SUFFIXES or verb not in ("patch", "read", "list", "delete"):
            raise AttributeError(method)
        kind = SUFFIXES[suffix]
        if verb == "list":
            return lambda **kw: self._list(kind, **kw)
        return lambda name, *args, **kw: getattr(self, f"_{verb}")(f"{kind}/{name}", *args, **kw)

    def _patch(self, key: str, body: dict, **kw: Any) -> Any:
        self.calls.append(("patch", key))
        assert kw["_request_timeout"] == step.REQUEST_TIMEOUT_S
        status = self.fail or self.refuse.pop(key, None)
        if status:
            raise ApiException(status=status, reason="Unprocessable Entity")
        self.applied.append((key, body, kw))
        live = copy.deepcopy(body)
        live["metadata"].update(
            uid=f"uid-{len(self.applied)}", resourceVersion=str(100 + len(self.applied)),
            creationTimestamp="2025-01-01T00:00:00Z",
            managedFields=[{"manager": kw["field_manager"], "operation": "Apply",
                            "apiVersion": "rbac.authorization.k8s.io/v1",
                            "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                            "fieldsV1": fields_v1(body)}])
        self.live[key] = live
        assert kw["_preload_content"] is False
        return SimpleNamespace(data=json.dumps(live).encode())

    def _read(self, key: str, **kw: Any) -> Any:
        self.calls.append(("read", key))
        if key not in self.live:
            raise ApiException(status=404, reason="Not Found")
        if self.lingering.get(key, 0) > 0:
            self.lingering[key] -= 1
        elif self.live[key]["metadata"].get("deletionTimestamp"):
            del self.live[key]
            raise ApiException(status=404, reason="Not Found")
        assert kw["_preload_content"] is False
        return SimpleNamespace(data=json.dumps(self.live[key]).encode())

    def _list(self, kind: str, label_selector: str, **kw: Any) -> Any:
        self.lists.append((kind, label_selector))
        wanted = set(label_selector.split(","))
        items = [body for key, body in self.live.items() if key.startswith(f"{kind}/")
                 and wanted <= {f"{k}={v}" for k, v in
                                (body["metadata"].get("labels") or {}).items()}]
        assert kw["_preload_content"] is False
        return SimpleNamespace(data=json.dumps({"items": items}).encode())

    def _delete(self, key: str, **_: Any) -> None:
        self.calls.append(("delete", key))
        if self.fail:
            raise ApiException(status=self.fail, reason="Forbidden")
        if key not in self.live or self.live[key]["metadata"].get("deletionTimestamp"):
            raise ApiException(status=404, reason="Not Found")
        if self.lingering.get(key):
            self.live[key]["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:01Z"
        else:
            del self.live[key]


def role(name: str, labels: dict[str, str] | None = RELEASE) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name, "labels": dict(labels or {}),
                         "annotations": dict(ANNOTATIONS)},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}


def binding(name: str, role_name: str = "a", labels: dict[str, str] | None = RELEASE) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(labels or {}),
                         "annotations": dict(ANNOTATIONS)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role_name},
            "subjects": [{"kind": "ServiceAccount", "name": "controller",
                          "namespace": "knative-serving"}]}


def test_each_object_is_applied_by_the_fleet_forced_and_its_answer_digested() -> None:
    rbac = FakeRbac()
    recorded = step.apply_all(rbac, [role("a"), binding("a")])
    assert [(key, kw["field_manager"], kw["force"], kw["_content_type"])
            for key, _, kw in rbac.applied] == [
        ("ClusterRole/a", "knative-fleet", True, "application/apply-patch+yaml"),
        ("ClusterRoleBinding/a", "knative-fleet", True, "application/apply-patch+yaml")]
    assert rbac.applied[0][1] == role("a")
    assert recorded == {key: applied_digest(rbac.live[key], "knative-fleet")
                        for key in ("ClusterRole/a", "ClusterRoleBinding/a")}
    assert recorded["ClusterRole/a"] != recorded["ClusterRoleBinding/a"]


def test_the_digest_is_of_the_fleets_fields_as_the_answer_holds_them() -> None:
    """The same body answered with another manager's fields only (someone else owns the
    object) records another digest: what is recorded is read from the answer."""
    rbac = FakeRbac()
    ours = step.apply_all(rbac, [role("a")])
    original = rbac._patch

    def not_ours(key: str, body: dict, **kw: Any) -> Any:
        answer = json.loads(original(key, body, **kw).data)
        answer["metadata"]["managedFields"][0]["manager"] = "kubectl"
        return SimpleNamespace(data=json.dumps(answer).encode())

    rbac._patch = not_ours  # type: ignore[method-assign]
    assert step.apply_all(rbac, [role("a")]) != ours


def test_a_binding_whose_role_ref_cannot_change_is_deleted_and_applied_again() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [binding("b", role_name="old")])
    rbac.calls.clear()
    rbac.refuse["ClusterRoleBinding/b"] = 422
    recorded = step.apply_all(rbac, [binding("b", role_name="new")])
    assert rbac.calls == [("patch", "ClusterRoleBinding/b"), ("read", "ClusterRoleBinding/b"),
                          ("delete", "ClusterRoleBinding/b"), ("read", "ClusterRoleBinding/b"),
                          ("patch", "ClusterRoleBinding/b")]
    assert rbac.live["ClusterRoleBinding/b"]["roleRef"]["name"] == "new"
    assert recorded == {"ClusterRoleBinding/b": applied_digest(
        rbac.live["ClusterRoleBinding/b"], "knative-fleet")}


def test_a_binding_refused_with_422_for_another_reason_is_raised_and_kept() -> None:
    """A 422 whose binding still names the same role (an invalid subject, say) is not
    the roleRef refusal: the binding is not deleted."""
    rbac = FakeRbac()
    step.apply_all(rbac, [binding("b", role_name="same")])
    rbac.calls.clear()
    rbac.refuse["ClusterRoleBinding/b"] = 422
    with pytest.raises(ApiException) as got:
        step.apply_all(rbac, [binding("b", role_name="same")])
    assert got.value.status == 422
    assert rbac.calls == [("patch", "ClusterRoleBinding/b"), ("read", "ClusterRoleBinding/b")]
    assert "ClusterRoleBinding/b" in rbac.live


def test_a_refused_cluster_role_is_raised_and_nothing_deleted() -> None:
    rbac = FakeRbac()
    rbac.refuse["ClusterRole/a"] = 422
    with pytest.raises(ApiException) as got:
        step.apply_all(rbac, [role("a"), binding("a")])
    assert got.value.status == 422
    assert rbac.calls == [("patch", "ClusterRole/a")]


def test_a_binding_refused_otherwise_is_raised_and_not_deleted() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [binding("b")])
    rbac.calls.clear()
    rbac.refuse["ClusterRoleBinding/b"] = 403
    with pytest.raises(ApiException):
        step.apply_all(rbac, [binding("b")])
    assert rbac.calls == [("patch", "ClusterRoleBinding/b")]
    assert "ClusterRoleBinding/b" in rbac.live


def fake_clock() -> tuple[Callable[[], float], Callable[[float], None], list[float]]:
    """A clock its sleeps advance, and the sleeps taken."""
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    return lambda: now[0], sleep, slept


def test_delete_tolerates_an_object_already_gone() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [role("a")])
    clock, sleep, slept = fake_clock()
    step.delete_all(rbac, ["ClusterRole/a", "ClusterRoleBinding/gone"], clock=clock,
                    sleep=sleep)
    assert ("delete", "ClusterRoleBinding/gone") in rbac.calls
    assert rbac.live == {} and slept == []


def test_delete_waits_until_every_object_is_gone() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [role("a"), binding("a")])
    rbac.lingering = {"ClusterRoleBinding/a": 3}
    clock, sleep, slept = fake_clock()
    step.delete_all(rbac, ["ClusterRole/a", "ClusterRoleBinding/a"], clock=clock, sleep=sleep)
    assert rbac.live == {}
    assert slept == [step.POLL_S] * 3  # three reads still found it
    # Only what is left is read again.
    reads = [key for verb, key in rbac.calls if verb == "read"]
    assert reads.count("ClusterRole/a") == 1 and reads.count("ClusterRoleBinding/a") == 4


def test_an_object_that_never_goes_is_named_with_its_finalizers_at_the_deadline() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [role("a"), binding("a")])
    rbac.live["ClusterRole/a"]["metadata"]["finalizers"] = ["example.com/keep", "other/x"]
    rbac.lingering = {"ClusterRole/a": 10**6, "ClusterRoleBinding/a": 10**6}
    clock, sleep, slept = fake_clock()
    with pytest.raises(step.ObjectsNotApplied, match=(
            r"^not deleted after 3 s: ClusterRole/a \(finalizers: example\.com/keep, "
            r"other/x\); ClusterRoleBinding/a \(finalizers: none\)$")):
        step.delete_all(rbac, ["ClusterRole/a", "ClusterRoleBinding/a"], timeout_s=3,
                        clock=clock, sleep=sleep)
    # It waited the whole timeout, and not a poll longer.
    assert 3 <= sum(slept) < 3 + step.POLL_S + 1e-9


def test_a_refused_delete_is_raised() -> None:
    rbac = FakeRbac()
    step.apply_all(rbac, [role("a")])
    rbac.fail = 403
    with pytest.raises(ApiException):
        step.delete_all(rbac, ["ClusterRole/a"])
    assert "ClusterRole/a" in rbac.live


def test_an_object_of_a_kind_the_step_does_not_hold_is_refused() -> None:
    with pytest.raises(step.ObjectsNotApplied, match="no objects of kind Deployment"):
        step.delete_all(FakeRbac(), ["Deployment/knative-serving/a"])


@pytest.fixture
def spoke(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"rbac": FakeRbac()}

    @contextlib.contextmanager
    def fake_client(connection: dict, timeout: float) -> Iterator[str]:
        seen["connection"], seen["timeout"] = connection, timeout
        if "unreachable" in seen:
            raise seen["unreachable"]
        yield "api"

    def rbac_api(api: str) -> FakeRbac:
        assert api == "api"
        return seen["rbac"]

    monkeypatch.setattr(step, "spoke_client", fake_client)
    monkeypatch.setattr(step.client, "RbacAuthorizationV1Api", rbac_api)
    return seen


def _props(bodies: list[dict]) -> dict[str, Any]:
    _, manifest = crd_manifest.encode(bodies)
    return {"id": "spoke-1:knative-serving/cluster-rbac", "spoke": "spoke-1",
            "objects": [f"{b['kind']}/{b['metadata']['name']}" for b in bodies],
            "manifest": manifest, "connection": {"server": "https://spoke-1"},
            "pluginTimeoutSeconds": 7}


def _applied(labels: dict[str, str] | None = RELEASE) -> dict[str, Any]:
    """The step's outputs after a create of ClusterRole a, ClusterRoleBinding a and
    ClusterRoleBinding b."""
    props = _props([role("a", labels), binding("a", labels=labels),
                    binding("b", labels=labels)])
    return {k: v for k, v in props.items() if k != "manifest"} | step.apply_objects(props)


def test_the_step_applies_the_manifest_through_the_spokes_connection(spoke) -> None:
    recorded = step.apply_objects(_props([role("a"), binding("a")]))
    assert spoke["connection"] == {"server": "https://spoke-1"} and spoke["timeout"] == 7.0
    assert [key for key, *_ in spoke["rbac"].applied] == ["ClusterRole/a", "ClusterRoleBinding/a"]
    assert set(recorded["applied"]) == {"ClusterRole/a", "ClusterRoleBinding/a"}
    assert recorded["selector"] == (
        "app.kubernetes.io/name=knative-serving,app.kubernetes.io/version=1.23.0")


def test_the_objects_that_left_are_deleted_after_the_apply(spoke) -> None:
    step.apply_objects(_props([role("a"), role("old")]))
    spoke["rbac"].calls.clear()
    recorded = step.apply_objects(_props([role("a")]), gone=["ClusterRole/old"])
    assert [c for c in spoke["rbac"].calls if c[0] != "read"] == [
        ("patch", "ClusterRole/a"), ("delete", "ClusterRole/old")]
    assert set(spoke["rbac"].live) == {"ClusterRole/a"}
    assert set(recorded["applied"]) == {"ClusterRole/a"}


@pytest.mark.parametrize("labels", [RELEASE, None], ids=["listed", "read"])
def test_a_refresh_finds_no_drift_on_objects_as_applied(spoke, labels) -> None:
    props = _applied(labels)
    spoke["rbac"].lists.clear()
    assert step.read_drift(props) == []
    # With labels they share, one list per kind; without, a read of each.
    assert len(spoke["rbac"].lists) == (2 if labels else 0)


def test_a_refresh_names_a_changed_object_and_a_gone_one(spoke) -> None:
    props = _applied()
    rbac = spoke["rbac"]
    live = rbac.live["ClusterRole/a"]  # kubectl edit: the rules leave the fleet's set
    live["rules"] = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    live["metadata"]["managedFields"][0]["fieldsV1"].pop("f:rules")
    live["metadata"]["managedFields"].append(
        {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:rules": {}}})
    del rbac.live["ClusterRoleBinding/b"]
    assert step.read_drift(props) == [{"name": "ClusterRole/a", "change": "changed"},
                                      {"name": "ClusterRoleBinding/b", "change": "deleted"}]


def test_a_role_and_a_binding_of_the_same_name_drift_apart(spoke) -> None:
    props = _applied()
    del spoke["rbac"].live["ClusterRoleBinding/a"]
    assert step.read_drift(props) == [{"name": "ClusterRoleBinding/a", "change": "deleted"}]


def test_fields_others_add_beside_the_fleets_are_no_drift(spoke) -> None:
    props = _applied()
    live = spoke["rbac"].live["ClusterRole/a"]
    live["metadata"]["labels"]["team"] = "x"
    live["metadata"]["managedFields"].append(
        {"manager": "kubectl-label", "operation": "Update",
         "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}})
    assert step.read_drift(props) == []


def test_a_state_without_digests_knows_no_drift_and_reads_nothing(spoke) -> None:
    props = _applied()
    props.pop("applied")
    spoke["rbac"].calls.clear()
    spoke["rbac"].lists.clear()
    assert step.read_drift(props) == []
    assert spoke["rbac"].calls == [] and spoke["rbac"].lists == []


@pytest.mark.parametrize("failure", ["refused", "unreachable", "bad manifest"])
def test_any_failure_to_apply_names_the_spoke_the_objects_and_the_way_on(spoke, failure) -> None:
    props = _props([role("a"), binding("a")])
    if failure == "refused":
        spoke["rbac"].fail = 403
    elif failure == "unreachable":
        spoke["unreachable"] = OSError("connection refused")
    else:
        props["manifest"] = "not base64 gzip"
    with pytest.raises(step.ObjectsNotApplied) as got:
        step.apply_objects(props)
    text = str(got.value)
    assert text.startswith("spoke 'spoke-1': could not apply the objects "
                           "ClusterRole/a, ClusterRoleBinding/a: ")
    assert "Nothing that needs them was registered." in text
    assert "Fix:" in text and "run the command again" in text
    assert got.value.__cause__ is not None


def test_delete_deletes_every_object_and_waits_until_gone(spoke) -> None:
    props = _applied()
    spoke["rbac"].lingering = {"ClusterRoleBinding/b": 1}
    step.delete_objects(props)
    assert spoke["rbac"].live == {}
    assert [key for verb, key in spoke["rbac"].calls if verb == "delete"] == [
        "ClusterRole/a", "ClusterRoleBinding/a", "ClusterRoleBinding/b"]


def test_a_refused_delete_fails_closed_naming_the_spoke(spoke) -> None:
    props = _applied()
    spoke["rbac"].fail = 403
    with pytest.raises(step.ObjectsNotApplied, match=(
            r"(?s)^spoke 'spoke-1': could not delete the objects ClusterRole/a, "
            r"ClusterRoleBinding/a, ClusterRoleBinding/b: ApiException.*still in the state.*"
            r"Fix:")):
        step.delete_objects(props)


def test_a_step_holding_nothing_deletes_nothing(spoke) -> None:
    step.delete_objects({"spoke": "spoke-1", "objects": [], "connection": {}})
    assert "connection" not in spoke and spoke["rbac"].calls == []


def test_a_namespaced_key_calls_the_namespaced_methods_of_the_client_that_has_them() -> None:
    """`Kind/namespace/name`: the namespaced method of whichever client holds it (Apis),
    with the namespace after the name; a list of a namespaced kind in its namespace."""
    calls: list[tuple] = []

    class Core:
        def read_namespaced_service_account(self, *args: Any, **kw: Any) -> Any:
            calls.append(("read_namespaced_service_account", args))
            return SimpleNamespace(data=b'{"metadata": {"name": "controller"}}')

        def list_namespaced_service_account(self, *args: Any, **kw: Any) -> Any:
            return SimpleNamespace(data=b'{"items": []}')  # not labelled: read instead

        def list_namespaced_service(self, *args: Any, **kw: Any) -> Any:
            calls.append(("list_namespaced_service", args, kw.get("label_selector")))
            return SimpleNamespace(data=json.dumps({"items": [
                {"metadata": {"name": "activator-service",
                              "namespace": "knative-serving"}}]}).encode())

    apis = step.Apis(FakeRbac(), Core())
    assert step.split_key("Service/knative-serving/activator-service") == (
        "Service", "knative-serving", "activator-service")
    assert step.split_key("ClusterRole/a") == ("ClusterRole", "", "a")
    live = step.live_objects(apis, ["ServiceAccount/knative-serving/controller",
                                    "Service/knative-serving/activator-service"], "app=x")
    assert set(live) == {"ServiceAccount/knative-serving/controller",
                         "Service/knative-serving/activator-service"}
    assert ("list_namespaced_service", ("knative-serving",), "app=x") in calls
    assert ("read_namespaced_service_account", ("controller", "knative-serving")) in calls


def test_the_fields_that_cannot_change_are_a_bindings_role_and_a_services_cluster_ip() -> None:
    """What a 422 is checked against before an object is made again."""
    assert step.immutable(binding("b", role_name="r"))["roleRef"]["name"] == "r"
    headless = {"kind": "Service", "metadata": {"name": "s", "namespace": "n"},
                "spec": {"clusterIP": "None", "ports": []}}
    assert step.immutable(headless) == {"clusterIP": "None"}
    assert step.immutable({**headless, "spec": {"ports": []}}) == {}
    assert step.immutable(role("a")) == {}
