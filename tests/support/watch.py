"""Watches on a spoke that run beside a Pulumi command: one records what happens to
objects, one plays the aggregation controller with a stale cache."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from knative.aggregated_roles import CONTROLLER_FIELD_MANAGER, is_aggregated


@dataclass
class Recorded:
    """(event type, kind, namespace, name, uid) of every event seen, in order."""

    events: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def deleted(self) -> list[tuple[str, str, str, str, str]]:
        return [e for e in self.events if e[0] == "DELETED"]


def _stream(list_call: Callable, stop: threading.Event, on_event: Callable[[dict], None],
            ready: threading.Event) -> None:
    """Lists once (so the watch starts at a known resourceVersion), then watches until
    `stop`, re-watching from the last version seen when the server ends a watch."""
    version = list_call(_request_timeout=30).metadata.resource_version
    ready.set()
    while not stop.is_set():
        w = watch.Watch()
        try:
            for event in w.stream(list_call, resource_version=version, timeout_seconds=2,
                                  allow_watch_bookmarks=True):
                obj = event["raw_object"]
                version = obj["metadata"]["resourceVersion"]
                if event["type"] != "BOOKMARK":
                    on_event(event)
                if stop.is_set():
                    break
        except ApiException as exc:
            if exc.status != 410:
                raise
            version = list_call(_request_timeout=30).metadata.resource_version
        finally:
            w.stop()


@contextmanager
def _watching(list_call: Callable, on_event: Callable[[dict], None]) -> Iterator[None]:
    stop, ready = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _stream(list_call, stop, on_event, ready)
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
            ready.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(60)
    try:
        yield
    finally:
        stop.set()
        thread.join(30)
    assert not errors, f"watch failed: {errors[0]!r}"


@contextmanager
def recording(api: client.ApiClient, namespaces: list[str]) -> Iterator[Recorded]:
    """Every ConfigMap and Secret event in `namespaces` while the block runs."""
    core = client.CoreV1Api(api)
    rec = Recorded()
    lock = threading.Lock()

    def record(kind: str) -> Callable[[dict], None]:
        def on_event(event: dict) -> None:
            meta = event["raw_object"]["metadata"]
            if meta.get("namespace") in namespaces:
                with lock:
                    rec.events.append((event["type"], kind, meta["namespace"], meta["name"],
                                       meta["uid"]))
        return on_event

    with _watching(core.list_config_map_for_all_namespaces, record("ConfigMap")), \
            _watching(core.list_secret_for_all_namespaces, record("Secret")):
        yield rec


@dataclass
class Recreations:
    """Names the stale controller applied again after their delete."""

    applied: list[str] = field(default_factory=list)


@contextmanager
def stale_aggregation_controller(api: client.ApiClient,
                                 emptied: bool = False) -> Iterator[Recreations]:
    """What the ClusterRole aggregation controller does from a stale informer cache: it
    applies an aggregated role by name (field manager `clusterrole-aggregation-controller`,
    force) on a ClusterRole event, which creates the role anew when it is gone.

    By default, once per role, right after the install's role is deleted, with the rules
    it last had. `emptied`: its cache saw every feeder go but not the role, so it applies
    no rules (the role comes back with no manager at all), and it stays stale for one
    more event: the delete of that bare role brings it back once more."""
    rbac = client.RbacAuthorizationV1Api(api)
    last_rules: dict[str, list] = {}
    done = Recreations()
    times = 2 if emptied else 1

    def apply(name: str) -> None:
        rules = [] if emptied else last_rules.get(name, [])
        body = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": name}}
        if rules:  # as the controller's apply configuration: no rules, no field
            body["rules"] = rules
        rbac.patch_cluster_role(name, body, field_manager=CONTROLLER_FIELD_MANAGER,
                                force=True, _content_type="application/apply-patch+yaml")
        done.applied.append(name)

    def on_event(event: dict) -> None:
        obj = event["raw_object"]
        name = obj["metadata"]["name"]
        ours = (obj["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE
        if ours and is_aggregated(obj) and event["type"] in ("ADDED", "MODIFIED"):
            last_rules[name] = obj.get("rules") or []
        elif (event["type"] == "DELETED" and name in last_rules
              and done.applied.count(name) < times):
            apply(name)

    with _watching(rbac.list_cluster_role, on_event):
        yield done


@dataclass
class Availability:
    """Every moment a watched Deployment was seen not Available: (namespace, name, reason)."""

    unavailable: list[tuple[str, str, str]] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)


@contextmanager
def deployments_availability(api: client.ApiClient,
                             namespaces: list[str]) -> Iterator[Availability]:
    """Records every Deployment event in `namespaces` whose Available condition is not
    True (a deletion counts too), while the block runs."""
    apps = client.AppsV1Api(api)
    out = Availability()
    lock = threading.Lock()

    def on_event(event: dict) -> None:
        obj = event["raw_object"]
        meta = obj["metadata"]
        if meta.get("namespace") not in namespaces:
            return
        conds = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
        available = conds.get("Available", {})
        with lock:
            out.seen.add((meta["namespace"], meta["name"]))
            if event["type"] == "DELETED":
                out.unavailable.append((meta["namespace"], meta["name"], "deleted"))
            elif available.get("status") != "True":
                out.unavailable.append((meta["namespace"], meta["name"],
                                        available.get("reason") or "no Available condition"))

    with _watching(apps.list_deployment_for_all_namespaces, on_event):
        yield out
