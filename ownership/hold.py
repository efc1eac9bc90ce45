"""A run's hold on a spoke: a `coordination.k8s.io` Lease the API server arbitrates.

Reading the owner records and then installing leaves a window in which two stacks'
runs both find a spoke unowned. So a run that changes a spoke first takes its hold,
a compare-and-swap on the API server: creating the Lease (the second creator gets
409 AlreadyExists), or taking over one whose hold expired with `resourceVersion` as
the precondition (the second writer gets 409 Conflict). Only under the hold does it
read the records again and go on. The hold is renewed while the run's process lives
and released once the install's anchors record the run's stack (or when the run
ends). Releasing deletes the Lease, with the `resourceVersion` it was read at as the
delete's precondition (a hold another run took meanwhile stays), so a run that ends
leaves no object of its own on the spoke and a `pulumi destroy` leaves nothing of the
fleet's there. A run that dies leaves a hold that expires by itself after HOLD_SECONDS
(its Lease stays until the next run takes the hold and releases it), and a later run
of the same stack takes it over at once (the backend's stack lock keeps two runs of
one stack apart). Hand-over takes the same hold. Previews take none: they change
nothing.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kubernetes import client
from kubernetes.client.rest import ApiException

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ownership.errors import HeldByAnotherRun
from ownership.identity import StackIdentity

LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "knative-fleet-hold"
HOLD_SECONDS = 120
# How often a run looks again when another run's write on the Lease came first (it took
# the hold, or released it between this run's create and read) before it refuses.
TAKE_ATTEMPTS = 3
# Who holds it, for people (the Lease's holderIdentity is the run's id), and the stack
# whose run it is: a later run of that stack takes a hold its earlier run left behind
# (the backend's stack lock keeps two runs of one stack from running at once).
HELD_BY_ANNOTATION = "knative-fleet.dev/held-by"
HELD_BY_STACK_ANNOTATION = "knative-fleet.dev/held-by-stack"

OpenApi = Callable[[], AbstractContextManager[client.ApiClient]]


@dataclass(frozen=True)
class Holder:
    """One run: `run` is unique to it, `what` says what it is, `stack` is the owner
    name of the stack it runs ("" for a hand-over)."""

    run: str
    what: str
    stack: str = ""

    def succeeds(self, lease: client.V1Lease) -> bool:
        """Whether the Lease's holder is an earlier run of this run's stack."""
        held_by = (lease.metadata.annotations or {}).get(HELD_BY_STACK_ANNOTATION)
        return bool(self.stack) and held_by == self.stack


def _now() -> datetime:
    return datetime.now(UTC)


def _expires(lease: client.V1Lease) -> datetime | None:
    spec = lease.spec
    if spec is None or not spec.holder_identity:
        return None
    renewed = spec.renew_time or spec.acquire_time
    if renewed is None:
        return None
    return renewed + timedelta(seconds=spec.lease_duration_seconds or HOLD_SECONDS)


def _refusal(spoke: str, lease: client.V1Lease, expires: datetime) -> HeldByAnotherRun:
    who = ((lease.metadata.annotations or {}).get(HELD_BY_ANNOTATION)
           or lease.spec.holder_identity)
    return HeldByAnotherRun(
        f"spoke {spoke!r}: {who} holds it now (Lease {LEASE_NAMESPACE}/{LEASE_NAME}, until "
        f"{expires:%Y-%m-%dT%H:%M:%SZ} unless renewed); nothing on the spoke was changed. "
        f"Fix: run again when that run has ended; a hold whose run died expires by itself "
        f"within {HOLD_SECONDS}s")


def _taken(lease: client.V1Lease, holder: Holder, now: datetime) -> client.V1Lease:
    lease.metadata.annotations = {**(lease.metadata.annotations or {}),
                                  HELD_BY_ANNOTATION: holder.what,
                                  HELD_BY_STACK_ANNOTATION: holder.stack}
    lease.spec = client.V1LeaseSpec(holder_identity=holder.run,
                                    lease_duration_seconds=HOLD_SECONDS,
                                    acquire_time=now, renew_time=now)
    return lease


def _read(leases: client.CoordinationV1Api) -> client.V1Lease | None:
    """The Lease, or None when there is none (never taken, or released)."""
    try:
        return leases.read_namespaced_lease(LEASE_NAME, LEASE_NAMESPACE)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _swapped(write: Callable[..., object], *args: object, **kwargs: object) -> bool:
    """Whether a compare-and-swap write went through: False when another run's write
    came first (409) or the Lease went meanwhile (404); any other answer raises."""
    try:
        write(*args, **kwargs)
    except ApiException as exc:
        if exc.status in (404, 409):
            return False
        raise
    return True


def acquire(api: client.ApiClient, spoke: str, holder: Holder) -> None:
    """Takes the spoke's hold for `holder`; raises HeldByAnotherRun while another run
    holds it, ApiException on any other answer (the caller fails closed).

    When another run's write on the Lease comes first, it looks again: a hold that run
    took is refused while it lives, a Lease it released (deleted) is created again."""
    leases = client.CoordinationV1Api(api)
    for _ in range(TAKE_ATTEMPTS):
        now = _now()
        fresh = _taken(client.V1Lease(metadata=client.V1ObjectMeta(
            name=LEASE_NAME, namespace=LEASE_NAMESPACE,
            labels={MANAGED_BY_LABEL: MANAGED_BY_VALUE})), holder, now)
        if _swapped(leases.create_namespaced_lease, LEASE_NAMESPACE, fresh):
            return
        current = _read(leases)
        if current is None:
            continue
        expires = _expires(current)  # None: nobody holds it
        if (expires is not None and expires > now
                and current.spec.holder_identity != holder.run and not holder.succeeds(current)):
            raise _refusal(spoke, current, expires)
        # current.metadata.resource_version is the take-over's precondition.
        if _swapped(leases.replace_namespaced_lease, LEASE_NAME, LEASE_NAMESPACE,
                    _taken(current, holder, now)):
            return
    raise HeldByAnotherRun(
        f"spoke {spoke!r}: other runs took its hold (Lease {LEASE_NAMESPACE}/{LEASE_NAME}) "
        f"before this run {TAKE_ATTEMPTS} times; nothing on the spoke was changed. Fix: "
        f"run again when those runs have ended")


def renew(api: client.ApiClient, holder: Holder) -> bool:
    """Moves the hold's expiry on; False when `holder` no longer holds it."""
    leases = client.CoordinationV1Api(api)
    current = _read(leases)
    if current is None or current.spec is None or current.spec.holder_identity != holder.run:
        return False
    current.spec.renew_time = _now()
    return _swapped(leases.replace_namespaced_lease, LEASE_NAME, LEASE_NAMESPACE, current)


def release(api: client.ApiClient, holder: Holder) -> bool:
    """Gives the hold up by deleting its Lease, so the next run need not wait for it to
    expire and the spoke keeps nothing of this run's; False when `holder` no longer
    holds it. The delete's precondition is the `resourceVersion` it was read at: a
    hold another run took over meanwhile is left alone."""
    leases = client.CoordinationV1Api(api)
    current = _read(leases)
    if current is None or current.spec is None or current.spec.holder_identity != holder.run:
        return False
    precondition = client.V1Preconditions(resource_version=current.metadata.resource_version)
    return _swapped(leases.delete_namespaced_lease, LEASE_NAME, LEASE_NAMESPACE,
                    body=client.V1DeleteOptions(preconditions=precondition))


class RunHolds:
    """The holds of one run: each taken before the run's first write on its spoke,
    renewed every quarter of HOLD_SECONDS while the process lives, released at its end."""

    def __init__(self, holder: Holder, log: Callable[[str], None] | None = None) -> None:
        self.holder = holder
        self.log = log or (lambda _line: None)
        self._held: dict[str, OpenApi] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def take(self, spoke: str, open_api: OpenApi,
             check: Callable[[client.ApiClient], None]) -> None:
        """Takes the spoke's hold, then runs `check` under it (the owner records read
        again); a check that raises gives the hold back and raises on."""
        with open_api() as api:
            acquire(api, spoke, self.holder)
            try:
                check(api)
            except BaseException:
                release(api, self.holder)
                raise
        with self._lock:
            self._held[spoke] = open_api
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew_loop, daemon=True,
                                                 name="knative-fleet-holds")
                self._renewer.start()
                atexit.register(self.release_all)

    def release(self, spoke: str) -> None:
        """Gives the spoke's hold up once its install records this run's stack (its
        anchors are applied): from then on the records refuse another stack."""
        with self._lock:
            open_api = self._held.pop(spoke, None)
        if open_api is None:
            return
        try:
            with open_api() as api:
                release(api, self.holder)
        except Exception as exc:  # noqa: BLE001 - the hold then expires by itself
            self.log(f"spoke {spoke!r}: releasing this run's hold failed: {exc}")

    def spokes(self) -> list[str]:
        with self._lock:
            return sorted(self._held)

    def _each(self) -> list[tuple[str, OpenApi]]:
        """The holds now, copied: no lock is held across a call to a spoke."""
        with self._lock:
            return list(self._held.items())

    def _renew_loop(self) -> None:
        while not self._stop.wait(HOLD_SECONDS / 4):
            for spoke, open_api in self._each():
                try:
                    with open_api() as api:
                        if not renew(api, self.holder):
                            self.log(f"spoke {spoke!r}: this run's hold was taken or lost")
                except Exception as exc:  # noqa: BLE001 - the next round tries again
                    self.log(f"spoke {spoke!r}: renewing this run's hold failed: {exc}")

    def release_all(self) -> None:
        """Gives every hold up (at the end of the run)."""
        self._stop.set()
        for spoke, open_api in self._each():
            try:
                with open_api() as api:
                    release(api, self.holder)
            except Exception as exc:  # noqa: BLE001 - the hold then expires by itself
                self.log(f"spoke {spoke!r}: releasing this run's hold failed: {exc}")
        with self._lock:
            self._held.clear()


def run_holds(owner: StackIdentity, log: Callable[[str], None] | None = None) -> RunHolds:
    """The holds of one `pulumi up` of `owner`."""
    import uuid

    return RunHolds(Holder(f"{owner.id}/{uuid.uuid4().hex}", f"a pulumi up of {owner.name}",
                           owner.name), log)
