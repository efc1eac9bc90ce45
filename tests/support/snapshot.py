"""kubetest's leak check for a spoke: the set of every object, by identity."""

from __future__ import annotations

from kubernetes import client

# Objects the cluster itself churns: not something an install leaves behind.
IGNORED = {"events", "leases", "endpoints", "endpointslices", "componentstatuses",
           "tokenreviews", "selfsubjectreviews", "bindings"}


def _get(api: client.ApiClient, path: str) -> dict:
    return api.call_api(path, "GET", response_type="object", auth_settings=["BearerToken"],
                        _return_http_data_only=True, _request_timeout=30)


def _group_versions(api: client.ApiClient) -> list[str]:
    versions = ["v1"]
    for group in _get(api, "/apis").get("groups", []):
        versions.append(group["preferredVersion"]["groupVersion"])
    return versions


def snapshot(api: client.ApiClient) -> set[tuple[str, str, str]]:
    """{(group/Kind, namespace, name)} for every listable object on the cluster."""
    seen: set[tuple[str, str, str]] = set()
    for gv in _group_versions(api):
        base = "/api/v1" if gv == "v1" else f"/apis/{gv}"
        for res in _get(api, base).get("resources", []):
            if "/" in res["name"] or "list" not in res.get("verbs", []):
                continue
            if res["name"] in IGNORED:
                continue
            group = gv.rpartition("/")[0] if "/" in gv else ""
            for item in _get(api, f"{base}/{res['name']}").get("items", []):
                meta = item["metadata"]
                seen.add((f"{group}/{res['kind']}", meta.get("namespace", ""), meta["name"]))
    return seen
