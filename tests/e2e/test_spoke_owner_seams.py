"""One owner per spoke at its seams, on the lab with the real engine and the released
Pulumi binaries: a spoke whose API server fails (503, 429, no answer) keeps its install
through a destroy; a stack whose state moved to another backend is still its owner,
and another stack of the same name there is not; two stacks started at the same
moment on one unowned spoke: exactly one installs.

spoke-2 sits behind a fault proxy for the whole module (tests/support/fault_proxy.py):
its ClusterProfile names the proxy and the proxy's CA, so the planner, the provider and
the owner guard all reach it there, as they would a real spoke's load balancer.
"""

from __future__ import annotations

import base64
import json
import shutil
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.stack import Result
from ownership.hold import LEASE_NAME, LEASE_NAMESPACE
from ownership.identity import OWNER_ID_OUTPUT
from tests.support.fault_proxy import HANG, PASS, FaultProxy, make_proxy_pki
from tests.support.fleet import spoke_in_state
from tests.support.snapshot import kept_by_policy, managed_versions, snapshot

pytestmark = pytest.mark.e2e
RELEASED = "released"  # what users run (core.settings, KNATIVE_FLEET_BINARIES)
GROUP, VERSION, PLURAL, NS = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles", "fleet-system"
ANCHOR = ("knative-serving", "knativeserving-knative-serving-root-owner")
OWNER_ID = "knative-fleet.dev/owner-id"
RACE_ROUNDS = 5
# The two places a run that loses a race for a spoke is refused (docs/architecture.md,
# "The claim"), as its refusal names them: the winner's hold, or the winner's owner
# record on the anchor once the winner recorded it.
AT_HOLD = f"Lease {LEASE_NAMESPACE}/{LEASE_NAME}"
AT_RECORD = f"annotation {OWNER_ID} on ConfigMap {ANCHOR[0]}/{ANCHOR[1]}"


def serving_only(spoke: str, **config: dict) -> dict:
    """Serving 1.23 on `spoke`, with `config` ({configmap: {key: value}}) when given."""
    found = entry(spoke, eventing=None)
    if config:
        found["serving"]["config"] = config
    return found


def new_stack(lab: Lab, prefix: str, state: Path) -> FleetStack:
    stack = FleetStack(lab, f"t-{prefix}-{uuid.uuid4().hex[:6]}", state, RELEASED)
    stack.init()
    return stack


def dispose(stack: FleetStack) -> None:
    stack.destroy()
    stack.remove()
    stack.cleanup()


def urns(stack: FleetStack) -> list[str]:
    """What the stack's state holds (secrets are encrypted anew at every write)."""
    return sorted(r["urn"] for r in stack.export()["deployment"].get("resources") or [])


def recorded_id(api: client.ApiClient) -> str | None:
    try:
        anchor = client.CoreV1Api(api).read_namespaced_config_map(ANCHOR[1], ANCHOR[0])
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return (anchor.metadata.annotations or {}).get(OWNER_ID)


@pytest.fixture(scope="module")
def proxy(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultProxy]:
    """spoke-2's ClusterProfile pointed at a fault proxy in front of its API server."""
    profiles = client.CustomObjectsApi(lab.hub.api())
    obj = profiles.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "spoke-2")
    original = json.loads(json.dumps(obj["status"]))
    cluster = obj["status"]["accessProviders"][0]["cluster"]
    upstream_ca = base64.b64decode(cluster["certificate-authority-data"])
    fault = FaultProxy(cluster["server"], upstream_ca,
                       make_proxy_pki(tmp_path_factory.mktemp("proxy-pki"))).start()
    cluster["server"] = fault.url
    cluster["certificate-authority-data"] = base64.b64encode(fault.ca).decode()
    profiles.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "spoke-2", obj)
    try:
        yield fault
    finally:
        fault.mode = PASS
        obj = profiles.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "spoke-2")
        obj["status"] = original
        profiles.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL,
                                                         "spoke-2", obj)
        fault.close()


def while_failing(proxy: FaultProxy, failure: int | str,
                  run: Callable[[], Result]) -> Result:
    """`run`'s result while the proxy fails with `failure`; the proxy passes again after."""
    proxy.mode = failure
    try:
        return run()
    finally:
        proxy.mode = PASS


@pytest.mark.parametrize("failure", [503, 429, HANG])
def test_a_guard_whose_spoke_fails_deletes_nothing(
        lab: Lab, proxy: FaultProxy, tmp_path_factory: pytest.TempPathFactory,
        failure: int | str, installed: dict) -> None:
    api = lab.spokes[1].api()
    stack: FleetStack = installed["stack"]
    before = managed_versions(api)
    held = urns(stack)
    res = while_failing(proxy, failure, stack.destroy)
    assert not res.ok, res.out
    assert "spoke 'spoke-2': its owner record could not be read" in res.out, res.out
    assert "nothing on the spoke was deleted" in res.out, res.out
    if failure != HANG:
        assert f"HTTP {failure}" in res.out, res.out
    assert managed_versions(api) == before
    assert urns(stack) == held


@pytest.mark.parametrize("failure", [503, 429, HANG])
def test_an_up_whose_spoke_fails_changes_nothing(
        lab: Lab, proxy: FaultProxy, failure: int | str, installed: dict) -> None:
    """A change for spoke-2 while its API server fails (503, 429, no answer): the run
    fails naming the spoke, the reason and the fix, writes nothing there, and the state
    holds every resource of the spoke as it was (ids and uids)."""
    api = lab.spokes[1].api()
    stack: FleetStack = installed["stack"]
    before = managed_versions(api)
    held = spoke_in_state(stack.export(), "spoke-2")
    assert len(held) > 20, sorted(held)
    wanted = f"{7 + [503, 429, HANG].index(failure)}1s"
    stack.configure([serving_only("spoke-2", autoscaler={"stable-window": wanted})])
    res = while_failing(proxy, failure, stack.up)
    assert not res.ok, res.out
    assert "spoke 'spoke-2': " in res.out and "Fix:" in res.out, res.out
    assert "could not be resolved: spoke-2 (" in res.out, res.out
    assert "Their resources were left untouched" in res.out, res.out
    assert "Traceback" not in res.out, res.out
    assert managed_versions(api) == before
    assert config_value(api) != wanted
    assert spoke_in_state(stack.export(), "spoke-2") == held


@pytest.fixture(scope="module")
def installed(lab: Lab, proxy: FaultProxy,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """Serving on spoke-2 through the proxy; destroyed at the end with the proxy passing."""
    api = lab.spokes[1].api()
    before = snapshot(api)
    stack = new_stack(lab, "seam", tmp_path_factory.mktemp("state"))
    stack.configure([serving_only("spoke-2")])
    try:
        res = stack.up()
        assert res.ok, res.why
        yield {"stack": stack, "before": before}
    finally:
        proxy.mode = PASS
        dispose(stack)


def test_with_the_spoke_healthy_again_the_destroy_removes_the_install(
        lab: Lab, proxy: FaultProxy, installed: dict) -> None:
    api = lab.spokes[1].api()
    assert proxy.mode == PASS
    res = installed["stack"].destroy()
    assert res.ok, res.why
    after = snapshot(api)
    leaked = after - installed["before"] - kept_by_policy(after)
    assert leaked == set(), sorted(leaked)[:20]


def test_a_stack_moved_to_another_backend_is_still_the_owner(
        lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Pulumi's documented move (export, login to the other backend, init, import) and a
    checkout moved on a `file://` backend: the no-op preview is empty; another stack of
    the same name on the second backend is refused."""
    api = lab.spokes[0].api()
    first = tmp_path_factory.mktemp("first")
    stack = new_stack(lab, "move", first)
    moved: FleetStack | None = None
    stranger: FleetStack | None = None
    try:
        stack.configure([serving_only("spoke-1")])
        res = stack.up()
        assert res.ok, res.why
        owner_id = stack.outputs()[OWNER_ID_OUTPUT]
        assert recorded_id(api) == owner_id

        exported = tmp_path_factory.mktemp("export") / "state.json"
        exported.write_text(json.dumps(stack.export()))
        second = tmp_path_factory.mktemp("second")
        moved = FleetStack(lab, stack.stack, second, RELEASED)
        moved.init()
        res = moved.run("stack", "import", "--file", str(exported))
        assert res.ok, res.why
        res = moved.run("preview", "--expect-no-changes")
        assert res.ok, res.why
        assert moved.outputs()[OWNER_ID_OUTPUT] == owner_id

        # A checkout (and its file:// state) moved to another directory.
        third = tmp_path_factory.mktemp("third") / "state"
        shutil.copytree(second, third)
        relocated = FleetStack(lab, stack.stack, third, RELEASED)
        res = relocated.run("preview", "--expect-no-changes")
        assert res.ok, res.why

        # Another stack of the same name, new on the second backend's neighbour.
        before = managed_versions(api)
        stranger = FleetStack(lab, stack.stack, tmp_path_factory.mktemp("fourth"), RELEASED)
        stranger.init()
        for res in (stranger.preview(), stranger.up()):
            assert not res.ok, res.out
            assert "spoke 'spoke-1': SpokeOwnedByAnotherStack" in res.out, res.out
            assert owner_id in res.out, res.out
        assert managed_versions(api) == before
        assert recorded_id(api) == owner_id
    finally:
        if stranger is not None:
            stranger.run("stack", "rm", "--yes", "--force")
        if moved is not None:
            res = moved.destroy()
            moved.remove()
            assert res.ok, res.why
        stack.run("stack", "rm", "--yes", "--force")
        stack.cleanup()


def race(a: FleetStack, b: FleetStack) -> tuple[Result, Result]:
    """Both stacks' `up`, started together."""
    results: dict[str, Result] = {}
    start = threading.Barrier(2)

    def run(stack: FleetStack) -> None:
        start.wait()
        results[stack.stack] = stack.up()

    threads = [threading.Thread(target=run, args=(s,)) for s in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results[a.stack], results[b.stack]


def config_value(api: client.ApiClient) -> str | None:
    cm = client.CoreV1Api(api).read_namespaced_config_map("config-autoscaler",
                                                          "knative-serving")
    return (cm.data or {}).get("stable-window")


def test_two_stacks_started_together_on_an_unowned_spoke_one_installs(
        lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> None:
    api = lab.spokes[0].api()
    state = tmp_path_factory.mktemp("race")
    a, b = new_stack(lab, "race-a", state), new_stack(lab, "race-b", state)
    a.configure([serving_only("spoke-1", autoscaler={"stable-window": "61s"})])
    b.configure([serving_only("spoke-1", autoscaler={"stable-window": "62s"})])
    window = {a.stack: "61s", b.stack: "62s"}
    try:
        for round_ in range(RACE_ROUNDS):
            results = dict(zip((a.stack, b.stack), race(a, b), strict=True))
            won = [name for name, res in results.items() if res.ok]
            assert len(won) == 1, (round_, {n: r.out[-3000:] for n, r in results.items()})
            winner = a if won[0] == a.stack else b
            loser = b if winner is a else a
            lost = results[loser.stack]
            assert "spoke 'spoke-1': SpokeOwnedByAnotherStack" in lost.out, lost.out
            winner_id = winner.outputs()[OWNER_ID_OUTPUT]
            # Where it lost: at the winner's hold, or at the owner record the winner's
            # anchors already carried.
            places = {"the hold": AT_HOLD, "the owner record": AT_RECORD}
            named = [place for place, text in places.items() if text in lost.out]
            assert len(named) == 1, (round_, f"the loser's refusal names {named or 'neither'} "
                                     f"of {places}", lost.out)
            [place] = named
            assert "nothing on the spoke was changed" in lost.out, (
                round_, f"lost at {place} ({places[place]})", lost.out)
            if place == "the owner record":
                assert winner_id in lost.out, (
                    round_, f"lost at the owner record ({AT_RECORD}) without naming the "
                    f"winner's owner id {winner_id}", lost.out)
            # The spoke holds the winner's install, written by it alone.
            assert recorded_id(api) == winner_id
            assert config_value(api) == window[winner.stack]
            before = managed_versions(api)
            res = winner.run("preview", "--expect-no-changes")
            assert res.ok, res.why
            assert managed_versions(api) == before
            for stack in (loser, winner):
                res = stack.destroy()
                assert res.ok, res.why
            assert recorded_id(api) is None
    finally:
        for stack in (a, b):
            dispose(stack)
