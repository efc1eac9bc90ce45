"""Where the spoke identity reads Secrets: only in an install namespace that holds the
release's Secrets, through a Role and a RoleBinding the plan creates there.

The provider reads the Secrets it manages (a refresh, a drift check) and, while it waits
for one's deletion, lists and watches Secrets in its namespace; RBAC cannot bind a role in
a namespace before it exists, so the reads are the plan's own objects: created after the
namespace and before the Secrets, deleted after them (knative.plan.Stage.READS), and
nothing of them is shared between installs or stacks. The identity creates them with
`escalate` and `bind` on their name alone, and the admission policy holds each to its plan
body like every other role and binding: Secret reads, to the identity the stack names, in
this namespace."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE, RBAC_GROUP

READS = "knative-fleet-secret-reads"  # the Role and its RoleBinding, in each namespace
# Reading Secrets, whatever their names: what the provider's reads and waits need.
SECRET_READS_RULE = {"apiGroups": [""], "resources": ["secrets"],
                     "verbs": ["get", "list", "watch"]}


def _meta(namespace: str) -> dict[str, Any]:
    return {"name": READS, "namespace": namespace,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}


def reads_role(namespace: str) -> dict[str, Any]:
    """Secret reads in `namespace`."""
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "Role", "metadata": _meta(namespace),
            "rules": [copy.deepcopy(SECRET_READS_RULE)]}


def reads_binding(namespace: str, subject: Mapping[str, str]) -> dict[str, Any]:
    """The identity's Secret reads in `namespace`."""
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding",
            "metadata": _meta(namespace),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": READS},
            "subjects": [dict(subject)]}


def reads_objects(namespace: str, subject: Mapping[str, str]) -> tuple[dict, ...]:
    return reads_role(namespace), reads_binding(namespace, subject)


def holds_secrets(objects: Iterable[Mapping[str, Any]]) -> bool:
    return any(o["kind"] == "Secret" and o.get("apiVersion") == "v1" for o in objects)
