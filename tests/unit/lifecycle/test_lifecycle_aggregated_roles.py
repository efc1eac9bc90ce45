"""The aggregated-role guard's and sweep's delete steps against an in-memory API that
plays the aggregation controller: the guard's waits for the controller to catch up,
deletes the role, removes what the controller re-creates, and leaves alone a role
someone else wrote. (The same race on real API servers is
`tests/e2e/test_uninstall_races.py`.)"""

from __future__ import annotations

import contextlib
import itertools

import pytest
from kubernetes.client.rest import ApiException

from knative.aggregated_roles import CONTROLLER_FIELD_MANAGER, selector_matches
from lifecycle import aggregated_roles as cleanup

RULE = {"apiGroups": ["a"], "resources": ["x"], "verbs": ["get"]}
SELECTOR = {"matchLabels": {"feeds": "agg"}}
UIDS = itertools.count()


def aggregated(rules: list) -> dict:
    return {"metadata": {"name": "agg", "uid": f"u{next(UIDS)}",
                         "labels": {"app.kubernetes.io/managed-by": "knative-fleet"}},
            "aggregationRule": {"clusterRoleSelectors": [SELECTOR]}, "rules": rules}


def recreation(rules: list) -> dict:
    return {"metadata": {"name": "agg", "uid": f"u{next(UIDS)}", "managedFields": [
        {"manager": CONTROLLER_FIELD_MANAGER, "operation": "Apply"}]}, "rules": rules}


class FakeRbac:
    """ClusterRoles in a dict; `after_delete` runs on every delete (the controller)."""

    def __init__(self, roles: list[dict], after_delete=None, lag_reads: int = 0) -> None:
        self.roles = {r["metadata"]["name"]: r for r in roles}
        self.after_delete = after_delete or (lambda name, gone: None)
        self.lag_reads = lag_reads  # reads before the controller writes the settled rules
        self.deleted: list[str] = []
        self.deleted_rules: list[list] = []
        self.api_client = self

    @staticmethod
    def sanitize_for_serialization(obj):
        return obj

    def read_cluster_role(self, name, **_):
        if self.lag_reads:
            self.lag_reads -= 1
            if self.lag_reads == 0 and "agg" in self.roles:
                self.roles["agg"]["rules"] = []  # the controller catches up
        if name not in self.roles:
            raise ApiException(status=404)
        return self.roles[name]

    def list_cluster_role(self, label_selector="", **_):
        labels = dict(p.split("=") for p in label_selector.split(",") if p)
        return {"items": [r for r in self.roles.values()
                          if selector_matches({"matchLabels": labels},
                                              r["metadata"].get("labels") or {})]}

    def delete_cluster_role(self, name, body=None, **_):
        obj = self.roles.get(name)
        if obj is None:
            raise ApiException(status=404)
        if body.preconditions.uid != obj["metadata"]["uid"]:
            raise ApiException(status=409)
        del self.roles[name]
        self.deleted.append(obj["metadata"]["uid"])
        self.deleted_rules.append(obj["rules"])
        self.after_delete(name, obj)


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cleanup, "POLL_S", 0.001)


def run(monkeypatch: pytest.MonkeyPatch, rbac: FakeRbac) -> None:
    monkeypatch.setattr(cleanup, "_rbac", lambda props: contextlib.nullcontext(rbac))
    cleanup.settle_and_delete({"role": "agg"})


def test_waits_for_the_controller_then_deletes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Feeders already deleted, the live role still holds their rule until the
    # controller's recompute lands.
    rbac = FakeRbac([aggregated([RULE])], lag_reads=3)
    run(monkeypatch, rbac)
    assert "agg" not in rbac.roles
    assert rbac.deleted_rules == [[]]  # deleted only once the controller had caught up


def test_removes_what_a_stale_controller_recreates(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[str] = []

    def stale_controller(name: str, gone: dict) -> None:
        if gone.get("aggregationRule"):  # its cache still has the install's role
            rbac.roles[name] = recreation(gone["rules"])
            created.append(rbac.roles[name]["metadata"]["uid"])

    rbac = FakeRbac([aggregated([])], after_delete=stale_controller)
    run(monkeypatch, rbac)
    assert "agg" not in rbac.roles
    assert created and created[0] in rbac.deleted


def test_leaves_a_role_someone_else_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    users = {"metadata": {"name": "agg", "uid": "users", "managedFields": [
        {"manager": "kubectl", "operation": "Apply"}]}, "rules": [RULE]}

    def someone(name: str, gone: dict) -> None:
        rbac.roles[name] = users

    rbac = FakeRbac([aggregated([])], after_delete=someone)
    run(monkeypatch, rbac)
    assert rbac.roles["agg"] is users


def test_sweep_deletes_only_recreations(monkeypatch: pytest.MonkeyPatch) -> None:
    rbac = FakeRbac([recreation([RULE])])
    monkeypatch.setattr(cleanup, "_rbac", lambda props: contextlib.nullcontext(rbac))
    cleanup.sweep({"roles": ["agg", "absent"]})
    assert rbac.roles == {}
