"""The lab side of the parity e2e modules (tests/e2e/test_operator_parity*.py): the specs
they give both the Knative Operator and knative-fleet, each install as the objects it
added to a spoke, and a spoke-1 the operator ran on brought back to the lab's empty one.

tests/support/parity.py compares the installs; this module only gathers them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from knative.aggregated_roles import is_controller_recreation
from lab.handle import Lab
from lab.idempotent import delete_if_present
from lab.operator import release_orphaned, remove_operator
from lab.removal import delete_crds, delete_namespaces
from lab.wait import WaitTimeout, wait_for
from tests.support import parity
from tests.support.fleet import changed_spokes, step_changes
from tests.support.snapshot import objects

SPECS = Path(__file__).parents[1] / "e2e" / "operator_specs"
SERVING, EVENTING = "knative-serving", "knative-eventing"


def spec(name: str, **values: str) -> dict:
    """The `spec` of a CR under tests/e2e/operator_specs/, each `${KEY}` of `values`
    replaced (others, such as `${VERSION}`, are left for the installs)."""
    text = (SPECS / name).read_text()
    for key, value in values.items():
        text = text.replace("${" + key + "}", value)
    return yaml.safe_load(text)["spec"]


def take_over(stack: Any, api: client.ApiClient, operator: Any, kinds: dict[str, str],
              fleet: list[dict], **overrides: object) -> None:
    """The README's take-over of spoke-1: the operator stops, its CRs (`kinds`: kind ->
    namespace, each named after its namespace) are released, knative-fleet's preview shows
    only creates on spoke-1 (every object adopted in place), `pulumi up` adopts, and the
    operator goes."""
    operator.stop()
    for kind, namespace in kinds.items():
        release_orphaned(api, kind, namespace, namespace)
    stack.configure(fleet, **overrides)
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {"spoke-1": {"create"}}, step_changes(steps)
    res = stack.up()
    assert res.ok, res.why
    remove_operator(api)


def fleet_entry(spoke: str, serving: dict | None, eventing: dict | None = None) -> dict:
    """A `fleet[]` entry for `spoke` with the two specs as they are (None: not installed)."""
    entry: dict = {"name": spoke, "clusterProfileRef": {"name": spoke,
                                                        "namespace": "fleet-system"}}
    if serving is not None:
        entry["serving"] = copy.deepcopy(serving)
    if eventing is not None:
        entry["eventing"] = copy.deepcopy(eventing)
    return entry


def install(api: client.ApiClient, before: set) -> dict:
    """The objects that appeared on the spoke since `before` (a set of keys)."""
    return parity.install_objects(objects(api), before)


def comparable(found: dict) -> dict:
    return {k: parity.normalize(k, v) for k, v in found.items()}


def remove_knative_crds(api: client.ApiClient) -> None:
    """Knative's CRDs, which an earlier install on the spoke kept (CRDs are kept on
    destroy), go first: both installs then create every object they compare."""
    ext = client.ApiextensionsV1Api(api)
    names = [c.metadata.name for c in ext.list_custom_resource_definition().items
             if c.spec.group.endswith("knative.dev") and not c.spec.group.startswith(
                 "operator.")]
    delete_crds(api, names)


def keep(where: Path, world: dict) -> None:
    """Both installs as JSON in the lab dir (`.lab/parity*/`), to read when the comparison
    fails (`lab dump` keeps the lab dir)."""
    where.mkdir(parents=True, exist_ok=True)
    for side in ("operator_install", "fleet_install"):
        rows = [{"key": list(k), "object": v} for k, v in sorted(world[side].items())]
        (where / f"{side}.json").write_text(json.dumps(rows, indent=1))


def clean_spoke(lab: Lab, api: client.ApiClient,
                namespaces: tuple[str, ...] = (SERVING, EVENTING)) -> None:
    """Whatever the tests left of the operator's install on spoke-1 goes (after a failed
    take-over, every object of it), so the next module starts from the lab's empty
    spoke: the CRs without their finalizer, then every object the operator labelled
    (app.kubernetes.io/name, its InjectLabel), then `namespaces` (the install namespaces,
    and any other the test made), then the operator itself (lab/removal.py: namespaces
    before CRDs)."""
    for kind, ns, name in (("KnativeServing", SERVING, SERVING),
                           ("KnativeEventing", EVENTING, EVENTING)):
        delete_if_present(release_orphaned, api, kind, ns, name)
    kubectl = [str(lab.bin / "kubectl"), "--kubeconfig", lab.spokes[0].kubeconfig]
    kinds = subprocess.run([*kubectl, "api-resources", "--verbs=list,delete", "-o", "name"],
                           check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    subprocess.run([*kubectl, "delete", ",".join(k for k in kinds if k != "events"), "-A",
                    "-l", "app.kubernetes.io/name in (knative-serving,knative-eventing)",
                    "--ignore-not-found", "--wait=false"],
                   check=True, stdout=subprocess.DEVNULL, timeout=300)
    delete_namespaces(api, namespaces)
    remove_operator(api)
    delete_resurrected_roles(api)


def delete_resurrected_roles(api: client.ApiClient, timeout: float = 120) -> list[str]:
    """Deletes the ClusterRoles Kubernetes' aggregation controller re-created after an
    install was deleted, and returns their names. The controller writes an aggregated
    role's rules with server-side apply, which creates the role when it is gone: a role
    still in its cache when the roles it aggregates went comes back bare (no labels, no
    aggregationRule; only that manager, or no manager and `rules: null` when it had
    already seen every feeder go), and an install on the spoke afterwards would find it
    there. The Knative Operator cannot install over the empty one at all (its
    AggregationRuleTransform fails on `rules: null`, on every reconcile).

    Settled by a barrier on the controller, not by waiting a while: a probe aggregated
    role and its feeder are created after the deletes, and once the controller has
    written the probe's rules its cache holds every delete before them; a last look then
    finds nothing new (or the round repeats)."""
    rbac = client.RbacAuthorizationV1Api(api)
    deleted: list[str] = []

    def sweep() -> list[str]:
        found = [r["metadata"]["name"] for r in api.sanitize_for_serialization(
                 rbac.list_cluster_role()).get("items") or []
                 if is_controller_recreation(r)]
        for name in found:
            delete_if_present(rbac.delete_cluster_role, name)
        deleted.extend(found)
        return found

    def round_quiet() -> bool:
        sweep()
        controller_barrier(rbac)
        return not sweep()

    wait_for(round_quiet, timeout, interval=0,
             what="no ClusterRole re-created by the aggregation controller")
    return deleted


def controller_barrier(rbac: client.RbacAuthorizationV1Api, timeout: float = 60) -> None:
    """Returns once the aggregation controller has handled a role change made now: a
    probe feeder and a probe aggregated role, created, aggregated, then deleted (the
    feeder first, then the aggregate once the controller emptied it, so the probe itself
    is never re-created)."""
    tag = uuid.uuid4().hex[:8]
    label = {"knative-fleet.test/aggregation-probe": tag}
    feeder, aggregate = f"kf-probe-feeder-{tag}", f"kf-probe-aggregate-{tag}"
    rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}
    rbac.create_cluster_role({"metadata": {"name": feeder, "labels": label},
                              "rules": [rule]})
    rbac.create_cluster_role({"metadata": {"name": aggregate},
                              "aggregationRule": {"clusterRoleSelectors": [
                                  {"matchLabels": label}]}})
    try:
        wait_for(lambda: rbac.read_cluster_role(aggregate).rules, timeout,
                 what=f"the aggregation controller filled {aggregate}")
    finally:
        delete_if_present(rbac.delete_cluster_role, feeder)
        with contextlib.suppress(WaitTimeout):
            wait_for(lambda: not rbac.read_cluster_role(aggregate).rules, timeout,
                     what=f"the aggregation controller emptied {aggregate}")
        delete_if_present(rbac.delete_cluster_role, aggregate)
