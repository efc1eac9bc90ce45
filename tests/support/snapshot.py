"""kubetest's leak check for a spoke: the set of every object, by identity."""

from __future__ import annotations

import json
from collections.abc import Iterator

from kubernetes import client

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


def snapshot(api: client.ApiClient) -> set[tuple[str, str, str]]:
    """{(group/Kind, namespace, name)} for every listable object on the cluster."""
    return {key for key, _ in _objects(api)}


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


def _expires(key: tuple[str, str, str], item: dict) -> bool:
    """A Job with `ttlSecondsAfterFinished` (the release's post-install Jobs: 600 s) is
    deleted by the cluster's TTL-after-finished controller on its own schedule; its going
    is not a write by any client, so a before/after comparison leaves it out."""
    return key[0] == "batch/Job" and (item.get("spec") or {}).get(
        "ttlSecondsAfterFinished") is not None


def managed_versions(api: client.ApiClient) -> dict[tuple[str, str, str], str]:
    """{identity: content} of every object this product manages on the cluster and that
    lives until a client deletes it: equal maps before and after a run mean the run wrote
    nothing there."""
    selector = "app.kubernetes.io/managed-by=knative-fleet"
    return {key: _content(item) for key, item in _objects(api, f"?labelSelector={selector}")
            if not _expires(key, item)}


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
