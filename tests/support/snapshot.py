"""kubetest's leak check for a spoke: the set of every object, by identity."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping

from kubernetes import client
from kubernetes.client.rest import ApiException

from fleet.spokes import INSTALL_NAMESPACES
from lab.wait import WaitTimeout, wait_for
from ownership.hold import HELD_BY_ANNOTATION, LEASE_NAME, LEASE_NAMESPACE

# Objects the cluster itself churns: not something an install leaves behind.
IGNORED = {"events", "leases", "endpoints", "endpointslices", "componentstatuses",
           "tokenreviews", "selfsubjectreviews", "bindings"}


def _get(api: client.ApiClient, path: str) -> dict:
    method, url, headers, body, _ = api.param_serialize(
        "GET", path, header_params={"Accept": "application/json"},
        auth_settings=["BearerToken"])
    resp = api.call_api(method, url, header_params=headers, body=body, _request_timeout=30)
    resp.read()
    return json.loads(resp.data)


def _group_versions(api: client.ApiClient) -> list[str]:
    versions = ["v1"]
    for group in _get(api, "/apis").get("groups", []):
        versions.append(group["preferredVersion"]["groupVersion"])
    return versions


def _objects(api: client.ApiClient, query: str = "") -> Iterator[tuple[tuple[str, str, str], dict]]:
    """((group/Kind, namespace, name), object) for every listable object on the cluster."""
    for gv in _group_versions(api):
        base = "/api/v1" if gv == "v1" else f"/apis/{gv}"
        for res in _get(api, base).get("resources", []):
            if "/" in res["name"] or "list" not in res.get("verbs", []):
                continue
            if res["name"] in IGNORED:
                continue
            group = gv.rpartition("/")[0] if "/" in gv else ""
            for item in _get(api, f"{base}/{res['name']}{query}").get("items", []):
                meta = item["metadata"]
                yield (f"{group}/{res['kind']}", meta.get("namespace", ""), meta["name"]), item


def objects(api: client.ApiClient) -> dict[tuple[str, str, str], dict]:
    """{(group/Kind, namespace, name): object} for every listable object on the cluster."""
    return dict(_objects(api))


MANAGED = "app.kubernetes.io/managed-by=knative-fleet"
# A run's hold on a spoke (ownership.hold), keyed as `versions` keys it.
HOLD = ("coordination.k8s.io/Lease", LEASE_NAMESPACE, LEASE_NAME)


def hold(api: client.ApiClient) -> client.V1Lease | None:
    """The spoke's hold Lease `kube-system/knative-fleet-hold`, or None (404): no run holds
    the spoke, and none left its hold there."""
    try:
        return client.CoordinationV1Api(api).read_namespaced_lease(
            LEASE_NAME, LEASE_NAMESPACE, _request_timeout=30)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def holds_left(apis: Mapping[str, client.ApiClient]) -> dict[str, str]:
    """{spoke: who holds it} of every spoke of `apis` that has a hold Lease: {} after a
    run that ended, since releasing a hold deletes its Lease."""
    found = {name: hold(api) for name, api in apis.items()}
    return {name: str((lease.metadata.annotations or {}).get(HELD_BY_ANNOTATION)
                      or lease.spec.holder_identity)
            for name, lease in found.items() if lease is not None}


def versions(api: client.ApiClient, namespaces: Iterable[str] = INSTALL_NAMESPACES
             ) -> dict[tuple[str, str, str], str]:
    """{(group/Kind, namespace, name): resourceVersion} of every object this product
    installed in `namespaces` (the kinds `snapshot` lists), and of the hold Lease (`HOLD`)
    when there is one: equal maps before and after a run mean it wrote nothing there,
    not even its hold."""
    namespaces = set(namespaces)
    found = {key: item["metadata"]["resourceVersion"]
             for key, item in _objects(api, f"?labelSelector={MANAGED}")
             if key[1] in namespaces}
    lease = hold(api)
    if lease is not None:
        found[HOLD] = lease.metadata.resource_version
    return found


def moved(before: Mapping[tuple[str, str, str], str],
          after: Mapping[tuple[str, str, str], str]) -> dict[tuple[str, str, str], tuple]:
    """{key: (before, after)} of each entry added, removed or changed between the maps."""
    return {key: (before.get(key), after.get(key)) for key in sorted(before.keys() | after.keys())
            if before.get(key) != after.get(key)}


IP_ADDRESS = "networking.k8s.io/IPAddress"
# kube-apiserver's ipallocator-repair-controller deletes an IPAddress whose Service is
# gone once it is 60 s old (one it sees younger it queues again for that moment); one
# whose Service went later, its release failing, it sees only on its informer's resync,
# every 3 minutes (`repairLoopInterval`, kubernetes v1.36 pkg/controlplane).
IP_REPAIR_SECONDS = 60 + 180 + 30


def orphaned_ips(found: dict[tuple[str, str, str], dict]) -> set[tuple[str, str, str]]:
    """The IPAddresses of `found` whose Service is not among `found`: the API server's own
    ClusterIP bookkeeping, left when releasing a deleted Service's address failed or a
    Service's creation did not finish, and collected by its repair loop."""
    orphans = set()
    for key, item in found.items():
        ref = (item.get("spec") or {}).get("parentRef") or {}
        if key[0] == IP_ADDRESS and ref.get("resource") == "services" and not ref.get("group") \
                and ("/Service", ref.get("namespace", ""), ref.get("name", "")) not in found:
            orphans.add(key)
    return orphans


def snapshot(api: client.ApiClient, settle_seconds: float = IP_REPAIR_SECONDS,
             poll_seconds: float = 2.0) -> set[tuple[str, str, str]]:
    """{(group/Kind, namespace, name)} for every listable object on the cluster, once no
    IPAddress is left whose Service is gone (`orphaned_ips`): such an address is neither
    a client's object nor a leak of one, and the API server deletes it within
    `settle_seconds`. One still there then is in the result, so a check fails on it."""
    seen: dict[str, dict] = {}

    def settled() -> bool:
        seen["found"] = objects(api)
        return not orphaned_ips(seen["found"])

    try:
        wait_for(settled, timeout=settle_seconds, interval=poll_seconds,
                 what="the API server's repair loop deleting orphaned IPAddresses")
    except WaitTimeout:
        pass
    return set(seen["found"])


def _content(item: dict) -> str:
    """The object as written by its clients: status and its writers left out (controllers
    such as the HPA's keep updating them), everything else, including the time of each
    other writer's last apply, kept, so any write by a client shows."""
    item = dict(item)
    item.pop("status", None)
    meta = dict(item["metadata"])
    meta.pop("resourceVersion", None)
    meta["managedFields"] = [f for f in meta.get("managedFields") or []
                             if f.get("subresource") != "status"]
    item["metadata"] = meta
    return json.dumps(item, sort_keys=True)


def expires(key: tuple[str, str, str], item: dict) -> bool:
    """A Job with `ttlSecondsAfterFinished` (the release's post-install Jobs: 600 s) is
    deleted by the cluster's TTL-after-finished controller on its own schedule; its going
    is not a write by any client, so a before/after comparison leaves it out."""
    return key[0] == "batch/Job" and (item.get("spec") or {}).get(
        "ttlSecondsAfterFinished") is not None


def managed_versions(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    """{identity: content} of every object this product manages on the cluster and that
    lives until a client deletes it: equal maps before and after a run mean the run wrote
    nothing there."""
    return {key: _content(item) for key, item in _objects(api, f"?labelSelector={MANAGED}")
            if not expires(key, item)}


def managed_uids(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    """{identity: uid} of every object this product manages on the cluster and that lives
    until a client deletes it (a Job the TTL controller collects is left out): equal maps
    before and after a run mean it deleted or re-created nothing there."""
    return {key: item["metadata"]["uid"]
            for key, item in _objects(api, f"?labelSelector={MANAGED}")
            if not expires(key, item)}


def kept_by_policy(objects: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """What an uninstall keeps on purpose, and nothing else: the CRDs among `objects`
    (kept on destroy by default; deleting them deletes every user's Knative objects)
    and the APIServices the apiserver registers for their groups, which live exactly
    as long as the CRDs. Pre-existing namespaces are in the "before" snapshot already."""
    crds = {o for o in objects if o[0] == "apiextensions.k8s.io/CustomResourceDefinition"}
    groups = {name.split(".", 1)[1] for _, _, name in crds}
    services = {o for o in objects if o[0] == "apiregistration.k8s.io/APIService"
                and o[2].split(".", 1)[-1] in groups}
    return crds | services


def after_destroy(api: client.ApiClient, before: set[tuple[str, str, str]]
                  ) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """(every object on the cluster now, those a destroy left behind): the objects that were
    not there `before`, less what an uninstall keeps on purpose (kept_by_policy)."""
    after = snapshot(api)
    return after, after - before - kept_by_policy(after)
