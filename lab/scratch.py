"""A lab test's scratch namespace: made by the admin, named so the lab's admission policy
leaves it alone (lab.spoke_role.SCRATCH_PREFIX), with a Role there that lets the lab's
spoke identity write the kinds the test names, in that namespace only."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from kubernetes import client

from lab import register
from lab.spoke_role import SCRATCH_PREFIX

RBAC = "rbac.authorization.k8s.io"


def scratch_namespace(api: client.ApiClient, purpose: str,
                      rules: Iterable[tuple[str, str]]) -> str:
    """A new scratch namespace for `purpose` where the lab's spoke identity holds every
    verb on each (API group, resource) of `rules`; its name."""
    name = f"{SCRATCH_PREFIX}{purpose}-{uuid.uuid4().hex[:6]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_namespaced_role(name, {
        "metadata": {"name": "lab-scratch"},
        "rules": [{"apiGroups": [g], "resources": [r], "verbs": ["*"]} for g, r in rules]})
    rbac.create_namespaced_role_binding(name, {
        "metadata": {"name": "lab-scratch"},
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "lab-scratch"},
        "subjects": [{"kind": "ServiceAccount", "name": register.SPOKE_SA,
                      "namespace": register.SPOKE_SA_NAMESPACE}]})
    return name
