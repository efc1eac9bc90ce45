"""The lab identity's rights grown to hold each stack config a test runs, as a user applies
the rights printed for a changed stack file before running it (docs/rbac.md, "When the
specs change"): the lab's policy holds the values of the plans it was derived from, and a
test's `config` override, registry or workload change is a plan of its own.

Only what is new is applied: a config whose objects and values the spokes' rights already
hold changes nothing. The rights grow within a test process (a test's earlier stacks keep
theirs, as `--config old.yaml` keeps a changed stack's); `python -m lab up` puts the lab's
own back."""

from __future__ import annotations

import base64
import contextlib
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.rest import ApiException

from config.fleet import parse_fleet_config
from core.errors import FleetError
from fleet.policy_entries import plan_entries
from fleet.rights import (
    CRDS,
    READ_VERBS,
    SECRETS,
    Right,
    crd_plurals,
    plan_objects,
    policy_rules,
    required_rights,
    resource_of,
)
from knative.plan import InstallPlan
from lab import register
from lab.handle import Cluster, Lab
from lab.idempotent import delete_if_present
from lab.spoke_role import lab_documents_of, lab_plans
from lab.wait import wait_for
from operations.access_roles import stack_plans
from operations.state_reads import unbound_namespaces, until_up_documents

CONFIG_PREFIX = "knative-fleet:"
# The API groups every spoke serves: an object of another kind is not served before its CRD.
BUILT_IN_GROUPS = ("", "apps", "batch", "policy", "autoscaling", "rbac.authorization.k8s.io",
                   "admissionregistration.k8s.io", "apiextensions.k8s.io")


@functools.lru_cache(maxsize=4)
def _base(bin_path: Path) -> list[InstallPlan]:
    return lab_plans(bin_path)


class _Admitted:
    """The plans a lab's rights were last applied for, the values they hold, and the
    resourceVersions of the documents as this process left them on each spoke."""

    def __init__(self, base: list[InstallPlan]) -> None:
        self.plans = list(base)
        self.entries = _entries(self.plans)
        self.versions: dict[str, dict[str, str]] = {}  # spoke -> "Kind/name" -> version

    def still_on(self, lab: Lab) -> bool:
        """Whether every spoke holds the rights as this process applied them: another
        apply (`python -m lab up`, which puts the lab's own back) changes a version."""
        return all(_versions(spoke, self.versions[spoke.name]) == self.versions[spoke.name]
                   for spoke in lab.spokes if spoke.name in self.versions)

    def holds(self, plans: list[InstallPlan]) -> bool:
        for key, entry in _entries(plans).items():
            held = self.entries.get(key)
            if held is None or not _within(entry, held):
                return False
        return True


_BY_LAB: dict[str, _Admitted] = {}


def _entries(plans: list[InstallPlan]) -> dict[str, dict[str, Any]]:
    return plan_entries(plan_objects(plans), crd_plurals(plans))


def _within(entry: Any, held: Any) -> bool:
    """Whether every value of `entry` is among `held`'s (the entries' lists of values)."""
    if isinstance(entry, Mapping):
        return isinstance(held, Mapping) and all(
            k in held and _within(v, held[k]) for k, v in entry.items())
    if isinstance(entry, list):
        return isinstance(held, list) and all(v in held for v in entry)
    return entry == held


def config_plans(config: Mapping[str, Any]) -> list[InstallPlan]:
    """The plans of a stack config (`knative-fleet:*` keys); none for one the run refuses
    at validation anyway."""
    raw = {k[len(CONFIG_PREFIX):]: v for k, v in config.items() if k.startswith(CONFIG_PREFIX)}
    try:
        return stack_plans(parse_fleet_config(raw))
    except (FleetError, ValueError):
        return []


def admit(lab: Lab, config: Mapping[str, Any]) -> bool:
    """The lab identity's role and policy on every spoke grown to hold `config`'s plans;
    True when they had to grow."""
    plans = config_plans(config)
    if not plans:
        return False
    admitted = _BY_LAB.get(str(lab.dir.root))
    if admitted is None or not admitted.still_on(lab):
        # The lab's own rights (or, first, what `lab up` applied): grown again from there.
        admitted = _BY_LAB[str(lab.dir.root)] = _Admitted(_base(lab.bin))
    if admitted.holds(plans):
        return False
    new = required_rights(plans) - required_rights(admitted.plans)
    changed = _changed(plans, admitted.entries)
    admitted.plans += plans
    admitted.entries = _entries(admitted.plans)
    docs = lab_documents_of(admitted.plans, register.SPOKE_SA, register.SPOKE_SA_NAMESPACE)
    plurals = crd_plurals(plans)
    for spoke in lab.spokes:
        register.apply_rbac(spoke.api(), docs)
        api = client.AuthorizationV1Api(spoke.api())
        # The API server's authorizer learns a changed role from its informer: a run
        # started at once could still be refused what the role now grants.
        wait_for(lambda a=api: all(_allowed(a, r) for r in new), 30,
                 what=f"{spoke.name}: the lab identity's new rights in force")
        # So does the policy: a dry run of each changed object, as the identity, until
        # the policy no longer refuses it.
        me = identity_api(spoke)
        wait_for(lambda m=me: not any(_refused(m, o, plurals) for o in changed), 30,
                 what=f"{spoke.name}: the lab identity's new policy in force")
        admitted.versions[spoke.name] = _versions(
            spoke, {f"{d['kind']}/{d['metadata']['name']}": "" for d in docs})
    return True


def _versions(spoke: Cluster, held: Mapping[str, str]) -> dict[str, str]:
    """{"Kind/name": resourceVersion} of the documents `held` names, as the spoke holds
    them now ("" for one that is gone)."""
    rbac = client.RbacAuthorizationV1Api(spoke.api())
    admission = client.AdmissionregistrationV1Api(spoke.api())
    reads = {"ClusterRole": rbac.read_cluster_role,
             "ClusterRoleBinding": rbac.read_cluster_role_binding,
             "ValidatingAdmissionPolicy": admission.read_validating_admission_policy,
             "ValidatingAdmissionPolicyBinding":
                 admission.read_validating_admission_policy_binding}
    out = {}
    for key in held:
        kind, name = key.split("/", 1)
        try:
            out[key] = reads[kind](name).metadata.resource_version
        except ApiException as exc:
            if exc.status != 404:
                raise
            out[key] = ""
    return out


def _changed(plans: list[InstallPlan], held: Mapping[str, Any]) -> list[dict]:
    """The plans' objects (of built-in kinds, at most 10) whose entry the rights so far do
    not hold."""
    plurals = crd_plurals(plans)
    entries = _entries(plans)
    out = []
    for obj in plan_objects(plans):
        group, resource = resource_of(obj, plurals)
        meta = obj["metadata"]
        key = f"{group}/{resource}/{meta.get('namespace') or ''}/{meta['name']}"
        if group in BUILT_IN_GROUPS and not _within(entries[key], held.get(key)):
            out.append(obj)
    return out[:10]


def identity_api(spoke: Cluster) -> client.ApiClient:
    """The spoke as the lab's spoke identity (its token, not the admin's certificate)."""
    secret = client.CoreV1Api(spoke.api()).read_namespaced_secret(
        register.SPOKE_TOKEN_SECRET, register.SPOKE_SA_NAMESPACE)
    cfg = client.Configuration()
    kube_config.load_kube_config(config_file=spoke.kubeconfig, client_configuration=cfg)
    cfg.cert_file = cfg.key_file = None
    cfg.api_key = {"authorization": "Bearer " + base64.b64decode(secret.data["token"]).decode()}
    return client.ApiClient(cfg)


def _refused(api: client.ApiClient, obj: dict,
             plurals: Mapping[tuple[str, str], str]) -> bool:
    """Whether the policy refuses a server-side dry run of `obj` as `api`'s identity (any
    other answer, a missing namespace say, says nothing of the policy)."""
    group, resource = resource_of(obj, plurals)
    base = f"/apis/{obj['apiVersion']}" if group else "/api/v1"
    meta = obj["metadata"]
    where = f"{base}/namespaces/{meta['namespace']}/{resource}" if meta.get("namespace") \
        else f"{base}/{resource}"
    method, url, headers, body, post = api.param_serialize(
        method="PATCH", resource_path=f"{where}/{meta['name']}",
        query_params=[("fieldManager", "knative-fleet"), ("force", "true"), ("dryRun", "All")],
        header_params={"Accept": "application/json",
                       "Content-Type": "application/apply-patch+yaml"},
        body=obj, auth_settings=["BearerToken"])
    response = api.call_api(method, url, header_params=headers, body=body, post_params=post,
                            _request_timeout=30)
    response.read()
    return response.status == 403 and b"ValidatingAdmissionPolicy" in response.data


def _allowed(api: client.AuthorizationV1Api, right: Right) -> bool:
    user = f"system:serviceaccount:{register.SPOKE_SA_NAMESPACE}:{register.SPOKE_SA}"
    attributes = {"group": right.api_group, "resource": right.resource, "verb": right.verb,
                  "name": right.name}
    review = api.create_subject_access_review(
        {"spec": {"user": user, "resourceAttributes": attributes}})
    return bool(review.status.allowed)


PREVIOUS = "lab-previous-release"


@contextlib.contextmanager
def previous_release_rights(lab: Lab, config: Mapping[str, Any]) -> Iterator[None]:
    """For the block, the lab identity also holds the rights a release before named writes
    checks for (every write verb on any name of the kinds `config`'s plans write, and Secret
    reads in every namespace), as a stack still on that release holds the rights printed
    for it; the admission policy stays this checkout's. Then only this checkout's rights
    again, as after an upgrade."""
    admit(lab, config)
    rights = {Right(r.api_group, r.resource, r.verb) for r in required_rights(config_plans(config))}
    # Before Secret reads were the plan's bindings, a release checked for them cluster-wide.
    rights |= {Right(*SECRETS, verb) for verb in READ_VERBS}
    # Before CRDs were deleted only where a spec says so, a release checked `delete` on
    # every CRD its plans write (fleet.rights.kept_crds).
    rights.add(Right(*CRDS, "delete"))
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": PREVIOUS}, "rules": policy_rules(rights)}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": PREVIOUS},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": PREVIOUS},
               "subjects": [{"kind": "ServiceAccount", "name": register.SPOKE_SA,
                             "namespace": register.SPOKE_SA_NAMESPACE}]}
    with _granted(lab, [role, binding], rights, "the previous release's rights"):
        yield

UNTIL_UP = "lab"


@contextlib.contextmanager
def state_reads(lab: Lab, resources: list[dict]) -> Iterator[None]:
    """For the block, the lab identity also holds the Secret reads the rights command
    prints for a state an earlier release wrote (operations.state_reads), as a user holds
    them until that stack's next `up`; nothing when the state needs none."""
    if not unbound_namespaces(resources):
        yield
        return
    who = {"kind": "ServiceAccount", "name": register.SPOKE_SA,
           "namespace": register.SPOKE_SA_NAMESPACE}
    docs = until_up_documents(who, UNTIL_UP)
    reads = {Right(*SECRETS, verb) for verb in READ_VERBS}
    with _granted(lab, docs, reads, "the Secret reads until up"):
        yield


@contextlib.contextmanager
def _granted(lab: Lab, docs: list[dict], rights: set[Right], what: str) -> Iterator[None]:
    """`docs` (a ClusterRole and its ClusterRoleBinding, one name) on every spoke for the
    block, in force (`rights` allowed) before it starts; deleted after it."""
    for spoke in lab.spokes:
        register.apply_rbac(spoke.api(), docs)
        api = client.AuthorizationV1Api(spoke.api())
        wait_for(lambda a=api: all(_allowed(a, r) for r in rights), 30,
                 what=f"{spoke.name}: {what} in force")
    try:
        yield
    finally:
        name = docs[0]["metadata"]["name"]
        for spoke in lab.spokes:
            rbac = client.RbacAuthorizationV1Api(spoke.api())
            delete_if_present(rbac.delete_cluster_role_binding, name)
            delete_if_present(rbac.delete_cluster_role, name)
