"""CustomResourceDefinitions installed on a lab cluster and ready to serve: the objects
of a kind can be created only once its CRD is Established."""

from __future__ import annotations

from collections.abc import Iterable

from kubernetes import client

from lab.idempotent import create_if_absent
from lab.wait import wait_for


def established(ext: client.ApiextensionsV1Api, name: str) -> bool:
    try:
        crd = ext.read_custom_resource_definition(name)
    except client.ApiException:
        return False
    return any(c.type == "Established" and c.status == "True"
               for c in (crd.status.conditions or []))


def install_crds(api: client.ApiClient, crds: Iterable[dict], timeout: float = 60) -> None:
    """Creates each CRD that is not there yet, then waits until every one is Established."""
    ext = client.ApiextensionsV1Api(api)
    names = []
    for crd in crds:
        create_if_absent(ext.create_custom_resource_definition, crd)
        names.append(crd["metadata"]["name"])
    for name in names:
        wait_for(lambda n=name: established(ext, n), timeout, what=f"CRD {name} Established")
