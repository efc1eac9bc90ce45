"""GETs against a Kubernetes API that return its JSON as plain dicts.

The program reads a handful of fields from a spoke (a namespace's labels, the labels
of its Deployments). The typed APIs of the kubernetes client (37.x) import and build
a pydantic model class for every object kind they name: `CoreV1Api` and `AppsV1Api`
took 1.3 s of CPU to import here, on the path of every `pulumi up` and `pulumi preview`
before the first resource registers, and each object read is then built as a model.
The client's own request machinery (auth, TLS, proxy, retries) is used as it is.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException


def get_json(api: client.ApiClient, path: str, query: dict[str, str] | None = None,
             timeout: float = 10) -> dict[str, Any]:
    """GET `path` (with `query`) and its JSON body; an error status raises ApiException,
    as the typed APIs do (`.status` 404 for a missing object)."""
    return request_json(api, "GET", path, query=query, timeout=timeout)


def create_json(api: client.ApiClient, path: str, obj: dict[str, Any],
                timeout: float = 10) -> dict[str, Any]:
    """POST `obj` to `path` and the JSON body the server answers with (a review's
    status), an error status raising ApiException."""
    return request_json(api, "POST", path, body=obj, timeout=timeout)


def request_json(api: client.ApiClient, verb: str, path: str,
                 query: dict[str, str] | None = None, body: dict[str, Any] | None = None,
                 timeout: float = 10) -> dict[str, Any]:
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    method, url, headers, body, post = api.param_serialize(
        method=verb, resource_path=path, query_params=list((query or {}).items()),
        header_params=headers, body=body, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers, body=body,
                            post_params=post, _request_timeout=timeout)
    response.read()
    if not 200 <= response.status <= 299:
        raise ApiException.from_response(http_resp=response,
                                         body=response.data.decode("utf-8", "replace"),
                                         data=None)
    return json.loads(response.data)
