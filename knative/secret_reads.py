"""Where the spoke identity reads Secrets: only in an install namespace that holds the
release's Secrets, through a RoleBinding the plan creates there, to a ClusterRole of Secret
reads that the rights file holds and binds nowhere else.

The provider reads the Secrets it manages (a refresh, a drift check) and, while it waits
for one's deletion, lists and watches Secrets in its namespace; RBAC cannot bind a role in
a namespace before it exists, so the binding is the plan's own object: created after the
namespace and before the Secrets, deleted after them (knative.plan.Stage.READS). The
admission policy holds it to its plan body like every other binding: this role, the
identity the stack names, this namespace."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from config.identity import RBAC_GROUP
from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE

READER_ROLE = "knative-fleet-secret-reader"
READS_BINDING = "knative-fleet-secret-reads"
PART_OF = {"app.kubernetes.io/part-of": "knative-fleet"}


def reader_role() -> dict[str, Any]:
    """The ClusterRole the rights file holds: Secret reads, bound only by the plan's
    bindings, one per install namespace."""
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": READER_ROLE, "labels": dict(PART_OF)},
            "rules": [{"apiGroups": [""], "resources": ["secrets"],
                       "verbs": ["get", "list", "watch"]}]}


def reads_binding(namespace: str, subject: Mapping[str, str]) -> dict[str, Any]:
    """The identity's Secret reads in `namespace`."""
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding",
            "metadata": {"name": READS_BINDING, "namespace": namespace,
                         "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": READER_ROLE},
            "subjects": [dict(subject)]}


def holds_secrets(objects: Iterable[Mapping[str, Any]]) -> bool:
    return any(o["kind"] == "Secret" and o.get("apiVersion") == "v1" for o in objects)


def binds_reads(objects: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a plan's objects hold a Secret-reads binding (the rights file then holds
    the role it binds)."""
    return any(o["kind"] == "RoleBinding" and o["metadata"]["name"] == READS_BINDING
               and o["roleRef"]["name"] == READER_ROLE for o in objects)
