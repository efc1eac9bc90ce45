"""The spoke's owner guard: registered after everything of the spoke and depending on
all of it (so Pulumi deletes it first), only when the plan has an owner; its create and
diff never reach the spoke; its delete runs lifecycle.owner_guard, passes its refusal on
as it is and reports any other failure with the spoke and the way on."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pulumi
import pytest

from access import spoke_client as spoke_access
from components import fleet as fleet_mod
from components import owner_guard
from components import spoke as spoke_mod
from fleet import plan_fleet
from lab.paths import REPO
from lifecycle import owner_guard as owner_check
from ownership.identity import StackIdentity, owner_name
from tests.support.factories import FakeInventory, spoke_connection, two_spoke_fleet

ME = owner_name("file:///state", "organization", "knative-fleet", "prod")
OTHER = owner_name("file:///state", "organization", "knative-fleet", "copy")
ME_ID = "kf-" + "1" * 32
SERVING = "knative-serving/knativeserving-knative-serving-root-owner"
EVENTING = "knative-eventing/knativeeventing-knative-eventing-root-owner"
GUARD_TYPE = "pulumi-python:dynamic/knative-fleet:SpokeOwnerGuard"


def props(*anchors: str) -> dict[str, Any]:
    return {"id": "spoke-1:owner-record", "spoke": "spoke-1", "owner": ME, "ownerId": ME_ID,
            "anchors": list(anchors), "spokeUrn": "urn:x::Spoke::spoke-1",
            "connection": spoke_access.connection_props(spoke_connection()),
            "pluginTimeoutSeconds": 5}


def step_raising(monkeypatch: pytest.MonkeyPatch, failure: Exception) -> list[dict[str, Any]]:
    """The lifecycle step, raising `failure`; returns the props of each call."""
    reads: list[dict[str, Any]] = []

    def check_owner(p: dict[str, Any]) -> None:
        reads.append(p)
        raise failure

    monkeypatch.setattr(owner_check, "check_owner", check_owner)
    return reads


def delete(p: dict[str, Any]) -> None:
    owner_guard._Provider().delete(p["id"], p)


def test_the_refusal_reaches_the_user_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    refusal = owner_check.OwnedByAnotherStack("spoke 'spoke-1': stack 'x' manages it")
    reads = step_raising(monkeypatch, refusal)
    with pytest.raises(owner_check.OwnedByAnotherStack) as refused:
        delete(props(SERVING))
    assert refused.value is refusal
    assert reads == [props(SERVING)]


def test_an_unexpected_failure_names_the_spoke_and_deletes_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    step_raising(monkeypatch, ValueError("bad anchor"))
    with pytest.raises(RuntimeError, match="spoke 'spoke-1': could not check the owner "
                       "record.*ValueError: bad anchor; nothing on the spoke was deleted"):
        delete(props(SERVING))


def test_create_and_diff_record_the_inputs_without_reaching_the_spoke(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads = step_raising(monkeypatch, AssertionError("reached the spoke"))
    provider = owner_guard._Provider()
    old = props(SERVING)
    assert provider.create(old).id == "spoke-1:owner-record"
    assert not provider.diff("g", old, {**old, "spokeUrn": "urn:renamed"}).changes
    for key, value in (("owner", OTHER), ("ownerId", "kf-other"), ("anchors", [SERVING, EVENTING]),
                       ("connection", {**old["connection"], "server": "https://new:6443"})):
        diff = provider.diff("g", old, {**old, key: value})
        assert diff.changes and not diff.replaces, key
    assert reads == []


def test_the_module_loads_without_the_kubernetes_client() -> None:
    """Every preview starts the dynamic provider and unpickles this module."""
    code = ("import sys, components.owner_guard; print(sorted({m.split('.')[0] for m in "
            "sys.modules} & {'kubernetes', 'pydantic', 'access', 'knative', 'fleet'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"


class Mocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, dict]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.seen[args.name] = (args.typ, args.inputs)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def recorded_depends(monkeypatch: pytest.MonkeyPatch, resource: str) -> dict[str, list]:
    """{name: depends_on} of each `resource` (a class components.spoke registers) the
    spokes register from now on."""
    depends: dict[str, list] = {}
    real = getattr(spoke_mod, resource)

    def recording(name: str, **kwargs: Any) -> Any:
        depends[name] = list(kwargs["opts"].depends_on)
        return real(name, **kwargs)

    monkeypatch.setattr(spoke_mod, resource, recording)
    return depends


def register(monkeypatch: pytest.MonkeyPatch, owner: str | None
             ) -> tuple[Mocks, dict[str, spoke_mod.Spoke], dict[str, list]]:
    """Registers the two-spoke fleet with mocks; returns what the engine saw, the
    spokes, and each owner guard's depends_on."""
    mocks = Mocks()
    pulumi.runtime.set_mocks(mocks, preview=False)
    depends = recorded_depends(monkeypatch, "SpokeOwnerGuard")
    plan = plan_fleet(two_spoke_fleet(), FakeInventory(),
                      owner=StackIdentity(ME_ID, owner) if owner else None)
    spokes: dict[str, spoke_mod.Spoke] = {}

    @pulumi.runtime.test
    def program():
        spokes.update(fleet_mod.register_fleet(plan))

    program()
    return mocks, spokes, depends


def test_each_webhook_remover_reaches_its_configurations_and_workloads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleted before every webhook configuration, Deployment and namespaced object of
    its component, through their last dependents."""
    removers = recorded_depends(monkeypatch, "WebhookConfigurationsFirst")
    _, spokes, _ = register(monkeypatch, ME)
    spoke = spokes["spoke-a"]
    assert len(removers) == 3  # Serving's and Eventing's on spoke-a, Serving's on spoke-b
    configurations = {r for r in spoke.registered if r._type.endswith("WebhookConfiguration")}
    workloads = set(spoke.deployments)
    mine = [deps for name, deps in removers.items() if name.startswith("spoke-a")]
    covered = set().union(*(reached(deps, spoke._depends) for deps in mine))
    assert workloads and workloads <= covered
    assert configurations <= covered
    assert all(len(set(deps)) == len(deps) for deps in mine)


def reached(start: list, depends: dict) -> set:
    """`start` and everything it depends on, directly or through others."""
    seen: set = set()
    todo = list(start)
    while todo:
        res = todo.pop()
        if res not in seen:
            seen.add(res)
            todo.extend(depends.get(res, ()))
    return seen


def test_each_spoke_gets_a_guard_that_depends_on_everything_of_the_spoke(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mocks, spokes, depends = register(monkeypatch, ME)
    assert set(depends) == {"spoke-a:owner-record", "spoke-b:owner-record"}
    spoke = spokes["spoke-a"]
    expected = {spoke.provider, *spoke._sweep, *spoke._guards.values(), *spoke.registered,
                *spoke._removers, *spoke._held}
    assert spoke._sweep and spoke._guards  # the install has aggregated roles
    assert len(spoke._removers) == 2  # Serving's and Eventing's webhook configurations first
    assert len(spoke._held) == 6  # and their CRDs, cluster RBAC and namespaced objects
    # What a wave gate digests: Kubernetes objects only (their uid and resourceVersion).
    assert all(hasattr(r, "metadata") for r in spoke.registered)
    # Through the last dependents: every resource of the spoke is one the guard depends
    # on or a dependency of one, so deleted after the guard.
    direct = depends["spoke-a:owner-record"]
    assert set(direct) <= expected and spoke.provider in direct
    assert reached(direct, spoke._depends) >= expected
    assert len(direct) < len(expected) / 3
    assert len(spoke.registered) > 60
    typ, inputs = mocks.seen["spoke-a:owner-record"]
    assert typ == GUARD_TYPE
    assert inputs["owner"] == ME and inputs["spoke"] == "spoke-a"
    assert inputs["ownerId"] == ME_ID
    assert inputs["anchors"] == [EVENTING, SERVING]
    assert inputs["spokeUrn"].endswith("::knative-fleet:index:Spoke::spoke-a")
    assert mocks.seen["spoke-b:owner-record"][1]["anchors"] == [SERVING]


def test_without_an_owner_no_guard_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    mocks, _, depends = register(monkeypatch, None)
    assert depends == {}
    assert not [n for n, (typ, _) in mocks.seen.items() if typ == GUARD_TYPE]
