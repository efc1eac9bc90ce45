"""The Secret reads a stack's state still needs: a state an earlier release wrote holds
the install's Secrets without the plan's `knative-fleet-secret-reads` Role and RoleBinding
(knative.secret_reads), which its first `pulumi up` with this release creates. Until then
the provider reads those Secrets (a refresh, a destroy's wait for their deletion) with the
rights that release printed, Secret reads in every namespace; the rights command prints
them again, named to be removed after that `up`, rather than let a `destroy` of such a state
wait out every Secret's deletion."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from core.names import RBAC_GROUP
from knative.secret_reads import READS, SECRET_READS_RULE

SECRET_TYPE = "kubernetes:core/v1:Secret"
ROLE_BINDING_TYPE = f"kubernetes:{RBAC_GROUP}/v1:RoleBinding"


def _namespace(resource: Mapping[str, Any]) -> str:
    meta = ((resource.get("inputs") or {}).get("metadata") or {})
    return str(meta.get("namespace") or "")


def unbound_namespaces(resources: Iterable[Mapping[str, Any]]) -> list[str]:
    """The namespaces where the state holds Secrets and no Secret-reads binding."""
    resources = list(resources)
    secrets = {_namespace(r) for r in resources if r.get("type") == SECRET_TYPE}
    bound = {_namespace(r) for r in resources if r.get("type") == ROLE_BINDING_TYPE
             and ((r.get("inputs") or {}).get("metadata") or {}).get("name") == READS}
    return sorted(secrets - bound)


def until_up_name(name: str) -> str:
    return f"{name}-secret-reads-until-up"


def until_up_documents(who: Mapping[str, str], name: str) -> list[dict[str, Any]]:
    """A ClusterRole of Secret reads and its binding to `who`, both until_up_name(name)."""
    role = until_up_name(name)
    meta = {"name": role, "labels": {"app.kubernetes.io/part-of": "knative-fleet"},
            "annotations": {"knative-fleet.dev/remove-after": "the stack's next pulumi up"}}
    return [{"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": meta,
             "rules": [copy.deepcopy(SECRET_READS_RULE)]},
            {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding",
             "metadata": dict(meta),
             "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
             "subjects": [dict(who)]}]


def until_up_note(stacks: Iterable[str], namespaces: Iterable[str], name: str) -> str:
    role = until_up_name(name)
    return (f"note: the state of {', '.join(stacks)} holds Secrets in "
            f"{', '.join(sorted(set(namespaces)))} without this release's Secret-reads "
            f"bindings, which its next `pulumi up` creates; until then the identity reads "
            f"Secrets in every namespace (ClusterRole and ClusterRoleBinding {role}, printed "
            f"below). After that up, delete both (kubectl delete clusterrolebinding,clusterrole "
            f"{role}); printed again, the rights no longer hold them.")
