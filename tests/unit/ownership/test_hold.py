"""A run's hold on a spoke (ownership.hold) against a fake of the Lease API: the
compare-and-swap that lets one run in, what it answers the others, and that release
leaves no Lease behind. Any answer but the expected ones fails closed."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from datetime import timedelta
from types import SimpleNamespace

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from core.reasons import Reason
from fleet import spokes as spokes_mod
from ownership import hold
from ownership.errors import HeldByAnotherRun, OwnedByAnotherStack
from ownership.identity import StackIdentity

LEASE = f"{hold.LEASE_NAMESPACE}/{hold.LEASE_NAME}"
STACK_A = "acme/knative-fleet/a@file:///state"
STACK_B = "acme/knative-fleet/b@file:///state"
ME = hold.Holder("kf-a/run-2", f"a pulumi up of {STACK_A}", STACK_A)
MY_DEAD_RUN = hold.Holder("kf-a/run-1", f"a pulumi up of {STACK_A}", STACK_A)
OTHER = hold.Holder("kf-b/run-1", f"a pulumi up of {STACK_B}", STACK_B)
THIRD = hold.Holder("hand-over/1", "a hand-over of spoke 'edge-7' from a to c")


def error(status: int, reason: str = "") -> ApiException:
    return ApiException(status=status, reason=reason)


class FakeLeases:
    """The CoordinationV1Api calls ownership.hold makes, on the one Lease, kept as the
    API server keeps it: every write moves resourceVersion on, a create of an existing
    Lease is 409 AlreadyExists, a replace or delete that names another resourceVersion
    is 409 Conflict, any call on a missing Lease 404. `before[call]` is another run's
    step just before this run's call (a race); `fail[call]` the answers to give
    instead, one per call."""

    def __init__(self, lease: client.V1Lease | None = None) -> None:
        self.lease: client.V1Lease | None = None
        self.version = 0
        self.before: dict[str, Callable[[], None]] = {}
        self.fail: dict[str, list[ApiException]] = {}
        self.answers: list[tuple[str, int]] = []
        self.deletes: list[client.V1DeleteOptions] = []
        if lease is not None:
            self.put(lease)

    def put(self, lease: client.V1Lease) -> client.V1Lease:
        """A write the server accepted (this run's, or another's)."""
        self.version += 1
        stored = copy.deepcopy(lease)
        stored.metadata.resource_version = str(self.version)
        stored.metadata.uid = stored.metadata.uid or f"uid-{self.version}"
        self.lease = stored
        return copy.deepcopy(stored)

    def gone(self) -> None:
        """Another run released the hold: its Lease deleted."""
        self.lease = None

    def _answer(self, call: str, status: int) -> None:
        self.answers.append((call, status))
        if status >= 300:
            raise error(status, {404: "NotFound", 409: "Conflict"}.get(status, "Error"))

    def _step(self, call: str) -> None:
        race = self.before.pop(call, None)
        if race:
            race()
        queued = self.fail.get(call)
        if queued:
            self._answer(call, queued.pop(0).status)

    def create_namespaced_lease(self, namespace: str, body: client.V1Lease, **_):
        self._step("create")
        assert namespace == hold.LEASE_NAMESPACE
        assert body.metadata.resource_version is None  # the server refuses one on create
        self._answer("create", 409 if self.lease is not None else 201)
        return self.put(body)

    def read_namespaced_lease(self, name: str, namespace: str, **_):
        self._step("read")
        assert (namespace, name) == (hold.LEASE_NAMESPACE, hold.LEASE_NAME)
        self._answer("read", 404 if self.lease is None else 200)
        return copy.deepcopy(self.lease)

    def replace_namespaced_lease(self, name: str, namespace: str, body: client.V1Lease, **_):
        self._step("replace")
        assert (namespace, name) == (hold.LEASE_NAMESPACE, hold.LEASE_NAME)
        if self.lease is None:
            self._answer("replace", 404)
        stale = body.metadata.resource_version != self.lease.metadata.resource_version
        self._answer("replace", 409 if stale else 200)
        return self.put(body)

    def delete_namespaced_lease(self, name: str, namespace: str,
                                body: client.V1DeleteOptions | None = None, **_):
        self._step("delete")
        assert (namespace, name) == (hold.LEASE_NAMESPACE, hold.LEASE_NAME)
        self.deletes.append(body)
        if self.lease is None:
            self._answer("delete", 404)
        wanted = body.preconditions.resource_version if body and body.preconditions else None
        stale = wanted is not None and wanted != self.lease.metadata.resource_version
        self._answer("delete", 409 if stale else 200)
        self.lease = None

    def calls(self) -> list[str]:
        return [call for call, _ in self.answers]

    def holder(self) -> str | None:
        return None if self.lease is None else self.lease.spec.holder_identity


def lease_of(holder: hold.Holder, renewed_ago: float = 0) -> client.V1Lease:
    """The Lease as `holder`'s run wrote it, last renewed `renewed_ago` seconds ago."""
    at = hold._now() - timedelta(seconds=renewed_ago)
    return hold._taken(client.V1Lease(metadata=client.V1ObjectMeta(
        name=hold.LEASE_NAME, namespace=hold.LEASE_NAMESPACE)), holder, at)


EXPIRED = hold.HOLD_SECONDS + 1


@pytest.fixture()
def leases(monkeypatch: pytest.MonkeyPatch) -> FakeLeases:
    fake = FakeLeases()
    monkeypatch.setattr(hold.client, "CoordinationV1Api", lambda api: fake)
    monkeypatch.setattr(hold.atexit, "register", lambda fn: fn)
    return fake


def api() -> object:
    return object()


# --- taking the hold ----------------------------------------------------------------

def test_a_spoke_without_a_hold_is_taken_by_a_create(leases: FakeLeases) -> None:
    hold.acquire(api(), "edge-7", ME)

    assert leases.answers == [("create", 201)]
    assert leases.holder() == ME.run
    assert leases.lease.spec.lease_duration_seconds == hold.HOLD_SECONDS
    assert leases.lease.metadata.labels == {MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    assert leases.lease.metadata.annotations == {hold.HELD_BY_ANNOTATION: ME.what,
                                                 hold.HELD_BY_STACK_ANNOTATION: STACK_A}


def test_a_live_hold_of_another_run_is_refused_naming_the_lease_and_its_holder(
        leases: FakeLeases) -> None:
    leases.put(lease_of(OTHER, renewed_ago=10))

    with pytest.raises(HeldByAnotherRun) as refused:
        hold.acquire(api(), "edge-7", ME)

    assert leases.answers == [("create", 409), ("read", 200)]
    assert "'edge-7'" in str(refused.value)
    assert LEASE in str(refused.value)
    assert OTHER.what in str(refused.value)
    assert leases.holder() == OTHER.run and leases.version == 1  # nothing written


def test_an_expired_hold_is_taken_over_with_its_resource_version(leases: FakeLeases) -> None:
    leases.put(lease_of(OTHER, renewed_ago=EXPIRED))

    hold.acquire(api(), "edge-7", ME)

    assert leases.answers == [("create", 409), ("read", 200), ("replace", 200)]
    assert leases.holder() == ME.run
    assert leases.lease.metadata.annotations[hold.HELD_BY_STACK_ANNOTATION] == STACK_A


def test_a_released_hold_from_before_deletes_is_taken_over(leases: FakeLeases) -> None:
    """A Lease a release left with no holder (as releases did before they deleted it)."""
    left = lease_of(OTHER)
    left.spec.holder_identity = None
    leases.put(left)

    hold.acquire(api(), "edge-7", ME)

    assert leases.holder() == ME.run


def test_a_take_over_another_run_won_first_is_refused_naming_the_lease(
        leases: FakeLeases) -> None:
    leases.put(lease_of(OTHER, renewed_ago=EXPIRED))
    leases.before["replace"] = lambda: leases.put(lease_of(THIRD))  # it took it over first

    with pytest.raises(HeldByAnotherRun) as refused:
        hold.acquire(api(), "edge-7", ME)

    assert ("replace", 409) in leases.answers  # the resourceVersion precondition held
    assert LEASE in str(refused.value)
    assert THIRD.what in str(refused.value)
    assert leases.holder() == THIRD.run


def test_a_hold_released_between_the_create_and_the_read_is_created_again(
        leases: FakeLeases) -> None:
    leases.put(lease_of(OTHER, renewed_ago=10))
    leases.before["read"] = leases.gone

    hold.acquire(api(), "edge-7", ME)

    assert leases.answers == [("create", 409), ("read", 404), ("create", 201)]
    assert leases.holder() == ME.run


def test_a_hold_that_keeps_changing_hands_is_refused_naming_the_lease(
        leases: FakeLeases) -> None:
    leases.fail["create"] = [error(409)] * hold.TAKE_ATTEMPTS  # each time gone by the read

    with pytest.raises(HeldByAnotherRun) as refused:
        hold.acquire(api(), "edge-7", ME)

    assert leases.calls() == ["create", "read"] * hold.TAKE_ATTEMPTS
    assert LEASE in str(refused.value)
    assert leases.lease is None


def test_the_same_stack_takes_its_dead_run_s_hold_at_once(leases: FakeLeases) -> None:
    leases.put(lease_of(MY_DEAD_RUN, renewed_ago=10))
    assert ME.succeeds(leases.lease)

    hold.acquire(api(), "edge-7", ME)

    assert leases.answers == [("create", 409), ("read", 200), ("replace", 200)]
    assert leases.holder() == ME.run


def test_only_a_run_of_the_same_stack_succeeds_a_hold() -> None:
    assert ME.succeeds(lease_of(MY_DEAD_RUN))
    assert not ME.succeeds(lease_of(OTHER))
    assert not OTHER.succeeds(lease_of(ME))
    # A hand-over belongs to no stack: it never takes another hand-over's hold early.
    assert not THIRD.succeeds(lease_of(hold.Holder("hand-over/0", "a hand-over")))
    assert not ME.succeeds(client.V1Lease(metadata=client.V1ObjectMeta(), spec=None))


def test_a_hand_over_is_refused_another_hand_over_s_live_hold(leases: FakeLeases) -> None:
    leases.put(lease_of(hold.Holder("hand-over/0", "a hand-over of spoke 'edge-7'")))

    with pytest.raises(HeldByAnotherRun, match="a hand-over of spoke 'edge-7'"):
        hold.acquire(api(), "edge-7", THIRD)


# --- any other answer fails closed --------------------------------------------------

@pytest.mark.parametrize(("call", "status", "lease"), [
    ("create", 500, None),
    ("create", 403, None),
    ("create", 401, None),
    ("create", 429, None),
    ("read", 403, lease_of(OTHER, renewed_ago=EXPIRED)),
    ("read", 503, lease_of(OTHER, renewed_ago=EXPIRED)),
    ("replace", 500, lease_of(OTHER, renewed_ago=EXPIRED)),
    ("replace", 403, lease_of(OTHER, renewed_ago=EXPIRED)),
])
def test_any_other_answer_while_taking_the_hold_fails_closed(
        leases: FakeLeases, call: str, status: int, lease: client.V1Lease | None) -> None:
    if lease is not None:
        leases.put(lease)
    before = copy.deepcopy(leases.lease)
    leases.fail[call] = [error(status)]

    with pytest.raises(ApiException) as failed:
        hold.acquire(api(), "edge-7", ME)

    assert failed.value.status == status
    assert leases.lease == before  # nothing taken
    assert leases.holder() != ME.run


def test_a_run_whose_hold_fails_closed_checks_and_holds_nothing(leases: FakeLeases) -> None:
    leases.fail["create"] = [error(500)]
    holds = hold.RunHolds(ME)
    checked: list[object] = []

    with pytest.raises(ApiException):
        holds.take("edge-7", contextlib.nullcontext, checked.append)

    assert checked == [] and holds.spokes() == []


@pytest.mark.parametrize(("fail", "lease", "reason"), [
    ({"create": [error(500)]}, None, Reason.SPOKE_OWNER_UNKNOWN),
    ({"create": [error(403)]}, None, Reason.SPOKE_OWNER_UNKNOWN),
    ({}, lease_of(OTHER), Reason.SPOKE_OWNED_BY_ANOTHER_STACK),
])
def test_the_planner_refuses_a_spoke_it_could_not_hold(
        leases: FakeLeases, monkeypatch: pytest.MonkeyPatch, fail: dict, lease, reason) -> None:
    if lease is not None:
        leases.put(lease)
    leases.fail.update(fail)
    monkeypatch.setattr(spokes_mod, "spoke_api_client", lambda *_: contextlib.nullcontext())
    monkeypatch.setattr(spokes_mod, "read_anchors", lambda _api: pytest.fail("read unheld"))
    owner = StackIdentity("kf-" + "a" * 32, STACK_A)
    holds = hold.RunHolds(ME)

    refusal = spokes_mod.hold_spoke("edge-7", SimpleNamespace(connection=None, credential=None),
                                    owner, holds)

    assert refusal is not None and refusal.reason == reason
    assert "nothing on the spoke was changed" in str(refusal)
    assert holds.spokes() == []


# --- renewing it --------------------------------------------------------------------

def test_renew_moves_the_expiry_of_this_run_s_hold_on(leases: FakeLeases) -> None:
    leases.put(lease_of(ME, renewed_ago=60))
    renewed_at = leases.lease.spec.renew_time

    assert hold.renew(api(), ME)

    assert leases.answers == [("read", 200), ("replace", 200)]
    assert leases.lease.spec.renew_time > renewed_at
    assert leases.holder() == ME.run


@pytest.mark.parametrize(("setup", "left"), [
    ("another run's", OTHER.run), ("none", None),
    ("taken meanwhile", OTHER.run), ("gone meanwhile", None),
])
def test_renew_tells_a_hold_this_run_no_longer_has(leases: FakeLeases, setup: str,
                                                   left: str | None) -> None:
    if setup == "another run's":
        leases.put(lease_of(OTHER))
    elif setup != "none":
        leases.put(lease_of(ME, renewed_ago=60))
        leases.before["replace"] = ((lambda: leases.put(lease_of(OTHER)))
                                    if setup == "taken meanwhile" else leases.gone)

    assert not hold.renew(api(), ME)

    assert leases.holder() == left


def test_renew_raises_any_other_answer(leases: FakeLeases) -> None:
    """RunHolds logs it and tries again the next round."""
    leases.put(lease_of(ME))
    leases.fail["read"] = [error(500)]

    with pytest.raises(ApiException):
        hold.renew(api(), ME)


# --- releasing it -------------------------------------------------------------------

def test_release_deletes_the_lease_with_its_resource_version_as_precondition(
        leases: FakeLeases) -> None:
    leases.put(lease_of(ME))
    version = leases.lease.metadata.resource_version

    assert hold.release(api(), ME)

    assert leases.answers == [("read", 200), ("delete", 200)]
    assert leases.lease is None  # nothing of the fleet's stays on the spoke
    (options,) = leases.deletes
    assert options.preconditions.resource_version == version


def test_release_leaves_a_hold_another_run_took_meanwhile(leases: FakeLeases) -> None:
    leases.put(lease_of(ME, renewed_ago=EXPIRED))
    leases.before["delete"] = lambda: leases.put(lease_of(OTHER))  # taken over after the read

    assert not hold.release(api(), ME)

    assert ("delete", 409) in leases.answers
    assert leases.holder() == OTHER.run


def test_release_of_a_hold_gone_meanwhile_is_no_error(leases: FakeLeases) -> None:
    leases.put(lease_of(ME))
    leases.before["delete"] = leases.gone

    assert not hold.release(api(), ME)

    assert ("delete", 404) in leases.answers
    assert leases.lease is None


@pytest.mark.parametrize("lease", [None, lease_of(OTHER)])
def test_release_deletes_nothing_this_run_does_not_hold(leases: FakeLeases, lease) -> None:
    if lease is not None:
        leases.put(lease)

    assert not hold.release(api(), ME)

    assert leases.deletes == []
    assert leases.holder() == (OTHER.run if lease is not None else None)


def test_release_raises_any_other_answer(leases: FakeLeases) -> None:
    """RunHolds logs it; the hold then expires by itself."""
    leases.put(lease_of(ME))
    leases.fail["delete"] = [error(403)]

    with pytest.raises(ApiException):
        hold.release(api(), ME)
    assert leases.holder() == ME.run


# --- one run's holds ------------------------------------------------------------------

def test_a_run_takes_checks_and_releases_leaving_no_lease(leases: FakeLeases) -> None:
    holds = hold.RunHolds(ME)
    checked: list[object] = []
    holds.take("edge-7", contextlib.nullcontext, checked.append)
    try:
        assert len(checked) == 1 and holds.spokes() == ["edge-7"]
        assert leases.holder() == ME.run

        holds.release("edge-7")

        assert leases.lease is None and holds.spokes() == []
        hold.acquire(api(), "edge-7", OTHER)  # the next run need not wait
        assert leases.holder() == OTHER.run
    finally:
        holds.release_all()


def test_a_check_that_refuses_gives_the_hold_back(leases: FakeLeases) -> None:
    holds = hold.RunHolds(ME)

    def refuse(_api: object) -> None:
        raise OwnedByAnotherStack("recorded for another stack")

    with pytest.raises(OwnedByAnotherStack):
        holds.take("edge-7", contextlib.nullcontext, refuse)

    assert leases.lease is None and holds.spokes() == []


def test_the_end_of_a_run_releases_every_hold(leases: FakeLeases) -> None:
    holds = hold.RunHolds(ME)
    holds.take("edge-7", contextlib.nullcontext, lambda _api: None)

    holds.release_all()

    assert leases.lease is None and holds.spokes() == []
    assert leases.calls()[-2:] == ["read", "delete"]


def test_a_failed_release_is_logged_and_the_hold_left_to_expire(leases: FakeLeases) -> None:
    lines: list[str] = []
    holds = hold.RunHolds(ME, lines.append)
    holds.take("edge-7", contextlib.nullcontext, lambda _api: None)
    leases.fail["delete"] = [error(503)]

    holds.release("edge-7")

    assert leases.holder() == ME.run
    assert len(lines) == 1 and "'edge-7'" in lines[0]
    holds.release_all()
