"""The lab's spoke identity runs the whole suite under the ClusterRole and admission policy
`python -m lab up` derives (lab.spoke_role): here, as that identity, every object of every
plan the lab's tests install (each Knative version of the release mirror and of the Knative
Operator's kodata, each ingress, each source) is admitted by a server-side dry run, and the
roles and bindings of each version are applied over the previous version's, as an upgrade
does (the aggregation controller filling the aggregated roles in between), then deleted.

The tests run in file order on spoke-2 and leave it as they found it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client

from fleet.rights import RBAC_GROUP, api_group, crd_plurals, plan_objects, resource_of
from knative.aggregated_roles import feeders_by_role
from knative.objects import defined_kinds, group_kind
from knative.plan import InstallPlan
from lab.admitted import identity_api
from lab.handle import Lab
from lab.idempotent import delete_if_present, if_present
from lab.spoke_role import lab_plans
from lab.wait import wait_for

pytestmark = pytest.mark.e2e
FIELD_MANAGER = "knative-fleet"


def path_of(obj: dict, plurals: dict, named: bool = True) -> str:
    group, resource = resource_of(obj, plurals)
    base = f"/apis/{obj['apiVersion']}" if group else "/api/v1"
    namespace = obj["metadata"].get("namespace")
    where = f"{base}/namespaces/{namespace}/{resource}" if namespace else f"{base}/{resource}"
    return f"{where}/{obj['metadata']['name']}" if named else where


def send(api: client.ApiClient, method: str, path: str, body: dict | None = None,
         dry_run: bool = False) -> tuple[int, str]:
    """(status, text) of one request; a body is server-side applied, forced, by the
    provider's field manager."""
    query = {"fieldManager": FIELD_MANAGER, "force": "true"} if body is not None else {}
    if dry_run:
        query["dryRun"] = "All"
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/apply-patch+yaml"
    method, url, headers, sent, post = api.param_serialize(
        method=method, resource_path=path, query_params=list(query.items()),
        header_params=headers, body=body, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers, body=sent, post_params=post,
                            _request_timeout=30)
    response.read()
    return response.status, response.data.decode("utf-8", "replace")


def distinct(objects: list[dict]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for obj in objects:
        key = json.dumps(obj, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(obj)
    return out


@pytest.fixture(scope="module")
def world(lab: Lab) -> Iterator[dict]:
    spoke = lab.spokes[1]
    admin = client.CoreV1Api(spoke.api())
    plans = lab_plans(lab.bin)
    versions = sorted({p.version for p in plans if p.component == "serving"})
    assert len(versions) >= 3, versions  # the mirror's two and the operator's own
    namespaces = sorted({o["metadata"]["name"] for o in plan_objects(plans)
                         if o["kind"] == "Namespace"})
    pinned = sorted({o["metadata"]["namespace"] for o in plan_objects(plans)
                     if o["metadata"].get("namespace") not in (None, *namespaces)})
    existing = {n.metadata.name for n in admin.list_namespace().items}
    made = [n for n in pinned if n not in existing]
    assert not existing & set(namespaces), "spoke-2 holds an install; nothing may run here"
    try:
        for name in made:  # a namespace the release pins objects to, made by its owner
            admin.create_namespace({"metadata": {"name": name}})
        yield {"spoke": spoke, "plans": plans, "me": identity_api(spoke),
               "namespaces": namespaces}
    finally:
        for name in [*namespaces, *made]:
            delete_if_present(admin.delete_namespace, name)
        for name in [*namespaces, *made]:
            wait_for(lambda n=name: n not in {x.metadata.name
                                              for x in admin.list_namespace().items},
                     120, what=f"namespace {name} deleted")


def by_version(plans: list[InstallPlan]) -> dict[str, list[InstallPlan]]:
    out: dict[str, list[InstallPlan]] = {}
    for plan in plans:
        minor = ".".join(plan.version.split(".")[:2])
        out.setdefault(minor, []).append(plan)
    return dict(sorted(out.items(), key=lambda kv: tuple(int(p) for p in kv[0].split("."))))


def test_every_object_of_every_lab_plan_is_admitted_for_the_lab_identity(world: dict) -> None:
    me, plans = world["me"], world["plans"]
    plurals = crd_plurals(plans)
    custom = defined_kinds([c for p in plans for c in p.rendered.crds])
    objects = distinct(plan_objects(plans))
    for namespace in [o for o in objects if o["kind"] == "Namespace"]:
        status, text = send(me, "PATCH", path_of(namespace, plurals), namespace)
        assert status in (200, 201), text
    refused, tried = [], 0
    for obj in objects:
        if obj["kind"] == "Namespace" or group_kind(obj) in custom:
            continue  # a kind the release's own CRDs define: not served before they are
        status, text = send(me, "PATCH", path_of(obj, plurals), obj, dry_run=True)
        tried += 1
        if status == 404 and api_group(obj) not in ("", "apps", "batch", RBAC_GROUP):
            continue  # another project's kind (Istio, Contour) this spoke does not serve
        if status not in (200, 201):
            refused.append((obj["kind"], obj["metadata"].get("namespace"),
                            obj["metadata"]["name"], status, text[:300]))
    assert tried > 500 and refused == [], refused[:10]


def test_each_versions_roles_apply_over_the_previous_ones_then_go(world: dict) -> None:
    me, spoke = world["me"], world["spoke"]
    rbac = client.RbacAuthorizationV1Api(spoke.api())
    applied: dict[str, dict] = {}
    for minor, plans in by_version(world["plans"]).items():
        plurals = crd_plurals(plans)
        for obj in distinct(plan_objects(plans)):
            if api_group(obj) != RBAC_GROUP:
                continue
            status, text = send(me, "PATCH", path_of(obj, plurals), obj)
            assert status in (200, 201), (minor, obj["kind"], obj["metadata"]["name"], text)
            applied[path_of(obj, plurals)] = obj
        fed = [name for name, feeders in feeders_by_role(applied.values()).items() if feeders]
        wait_for(lambda names=fed: all(rbac.read_cluster_role(n).rules for n in names),
                 60, what=f"{minor}: the aggregation controller to fill the aggregated roles")
    aggregated = {p for p, o in applied.items() if o.get("aggregationRule")}
    for path in [*(p for p in applied if p not in aggregated), *sorted(aggregated)]:
        status, text = send(me, "DELETE", path)
        assert status in (200, 202, 404), (path, text)
    names = {applied[p]["metadata"]["name"] for p in aggregated}
    empty = [0]  # polls in a row that found none

    def gone() -> bool:
        """No aggregated role left, also none the controller wrote again late: the
        aggregation controller applies a role from its cache, which makes it anew after a
        delete, so a role found again loses its aggregation rule first (the controller
        then leaves it alone) and is deleted; done once three polls in a row find none."""
        live = {r.metadata.name for r in rbac.list_cluster_role().items} & names
        for name in live:
            if_present(rbac.patch_cluster_role, name, {"aggregationRule": None})
            delete_if_present(rbac.delete_cluster_role, name)
        empty[0] = 0 if live else empty[0] + 1
        return empty[0] >= 3

    wait_for(gone, 60, interval=1, what="the aggregated roles deleted for good")
