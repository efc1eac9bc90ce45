"""Registers a spoke on the hub exactly as the user guide's "Register a
ClusterProfile manually": a ServiceAccount token on the spoke (bound to the ClusterRole
knative-fleet derives from its plans and held by the admission policy derived beside it,
lab.spoke_role, not cluster-admin), that token in
the hub Secret the upstream `secretreader` plugin reads, then the ClusterProfile spec
and, through the status subresource, its status."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from lab.crds import install_crds
from lab.idempotent import create_if_absent, delete_if_present
from lab.paths import CLUSTERPROFILE_CRD
from lab.wait import wait_for

PROFILE_NAMESPACE = "fleet-system"
SPOKE_SA = "knative-fleet-spoke"
SPOKE_SA_NAMESPACE = "kube-system"
SPOKE_TOKEN_SECRET = "knative-fleet-spoke-token"
PROVIDER_NAME = "secretreader"
EXEC_EXTENSION = "client.authentication.k8s.io/exec"
GROUP, VERSION, PLURAL = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles"


def api_client(kubeconfig: Path) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


def install_clusterprofile_crd(hub: client.ApiClient) -> None:
    install_crds(hub, [yaml.safe_load(CLUSTERPROFILE_CRD.read_text())])


def spoke_token(spoke: client.ApiClient, account: str = SPOKE_SA,
                cluster_role: str | None = "cluster-admin") -> tuple[str, str]:
    """Creates a ServiceAccount `account` on the spoke, its binding to `cluster_role`
    (None: bound elsewhere) and its token Secret; returns (token, base64 CA) once the
    token controller has filled the Secret."""
    core = client.CoreV1Api(spoke)
    rbac = client.RbacAuthorizationV1Api(spoke)
    create_if_absent(core.create_namespaced_service_account, SPOKE_SA_NAMESPACE,
            {"metadata": {"name": account}})
    if cluster_role:
        create_if_absent(rbac.create_cluster_role_binding, {
            "metadata": {"name": account},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": cluster_role},
            "subjects": [{"kind": "ServiceAccount", "name": account,
                          "namespace": SPOKE_SA_NAMESPACE}],
        })
    secret = SPOKE_TOKEN_SECRET if account == SPOKE_SA else f"{account}-token"
    create_if_absent(core.create_namespaced_secret, SPOKE_SA_NAMESPACE, {
        "metadata": {"name": secret,
                     "annotations": {"kubernetes.io/service-account.name": account}},
        "type": "kubernetes.io/service-account-token",
    })

    def filled() -> dict[str, str] | None:
        data = core.read_namespaced_secret(secret, SPOKE_SA_NAMESPACE).data or {}
        return data if data.get("token") and data.get("ca.crt") else None

    data = wait_for(filled, timeout=60,
                    what="the spoke's token controller to fill the token Secret")
    return base64.b64decode(data["token"]).decode(), data["ca.crt"]


def apply_rbac(api: client.ApiClient, docs: list[dict]) -> None:
    """Creates each ClusterRole, ClusterRoleBinding, ValidatingAdmissionPolicy and its
    binding of `docs`, in their order, or replaces it."""
    rbac = client.RbacAuthorizationV1Api(api)
    admission = client.AdmissionregistrationV1Api(api)
    calls = {"ClusterRole": (rbac.create_cluster_role, rbac.replace_cluster_role),
             "ClusterRoleBinding": (rbac.create_cluster_role_binding,
                                    rbac.replace_cluster_role_binding),
             "ValidatingAdmissionPolicy": (admission.create_validating_admission_policy,
                                           _replace_keeping_version(
                                               admission.read_validating_admission_policy,
                                               admission.replace_validating_admission_policy)),
             "ValidatingAdmissionPolicyBinding": (
                 admission.create_validating_admission_policy_binding,
                 _replace_keeping_version(
                     admission.read_validating_admission_policy_binding,
                     admission.replace_validating_admission_policy_binding))}
    for doc in docs:
        create, replace = calls[doc["kind"]]
        try:
            create(doc)
        except ApiException as exc:
            if exc.status != 409:
                raise
            replace(doc["metadata"]["name"], doc)


def _replace_keeping_version(read: Callable[..., Any], replace: Callable[..., Any]
                             ) -> Callable[[str, dict], Any]:
    """A replace for kinds whose update needs the live resourceVersion (the RBAC kinds
    take an update without one)."""
    def call(name: str, doc: dict) -> Any:
        live = read(name)
        meta = {**doc["metadata"], "resourceVersion": live.metadata.resource_version}
        return replace(name, {**doc, "metadata": meta})
    return call


def hub_secret_namespace(hub_kubeconfig: Path) -> str:
    """Where `secretreader` looks: the hub kubeconfig's current-context namespace, else default."""
    cfg = yaml.safe_load(hub_kubeconfig.read_text())
    current = cfg.get("current-context")
    for ctx in cfg.get("contexts") or []:
        if ctx.get("name") == current:
            return (ctx.get("context") or {}).get("namespace") or "default"
    return "default"


def put_token_on_hub(hub: client.ApiClient, namespace: str, cluster_name: str, token: str) -> None:
    core = client.CoreV1Api(hub)
    body = {"metadata": {"name": cluster_name}, "type": "Opaque",
            "stringData": {"token": token}}
    try:
        core.create_namespaced_secret(namespace, body)
    except ApiException as exc:
        if exc.status != 409:
            raise
        core.replace_namespaced_secret(cluster_name, namespace, body)


def profile_status(server: str, ca_b64: str, cluster_name: str) -> dict:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "conditions": [{
            "type": "ControlPlaneHealthy", "status": "True", "reason": "Manual",
            "message": "Status set by the knative-fleet lab", "lastTransitionTime": now,
        }],
        "accessProviders": [{
            "name": PROVIDER_NAME,
            "cluster": {
                "server": server,
                "certificate-authority-data": ca_b64,
                "extensions": [{"name": EXEC_EXTENSION,
                                "extension": {"clusterName": cluster_name}}],
            },
        }],
    }


def apply_cluster_profile(hub: client.ApiClient, name: str, status: dict) -> None:
    core = client.CoreV1Api(hub)
    create_if_absent(core.create_namespace, {"metadata": {"name": PROFILE_NAMESPACE}})
    objs = client.CustomObjectsApi(hub)
    create_if_absent(objs.create_namespaced_custom_object, GROUP, VERSION, PROFILE_NAMESPACE,
                     PLURAL, {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile",
        "metadata": {"name": name, "namespace": PROFILE_NAMESPACE,
                     "labels": {"x-k8s.io/cluster-manager": "knative-fleet-lab"}},
        "spec": {"displayName": name, "clusterManager": {"name": "knative-fleet-lab"}},
    })
    objs.patch_namespaced_custom_object_status(
        GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name, {"status": status})


def spoke_server(kubeconfig: Path) -> str:
    cfg = yaml.safe_load(kubeconfig.read_text())
    return cfg["clusters"][0]["cluster"]["server"]


def register_spoke(hub_kubeconfig: Path, spoke_kubeconfig: Path, name: str,
                   account: str = SPOKE_SA, cluster_role: str | None = "cluster-admin",
                   role_docs: list[dict] | None = None) -> None:
    """ClusterProfile `name` on the hub for the spoke, reached as ServiceAccount `account`
    bound to `cluster_role` there, or by `role_docs` (an admission policy, a ClusterRole
    and their bindings, applied on the spoke first)."""
    hub = api_client(hub_kubeconfig)
    spoke = api_client(spoke_kubeconfig)
    if role_docs:
        apply_rbac(spoke, role_docs)
        cluster_role = None
    token, ca_b64 = spoke_token(spoke, account, cluster_role)
    put_token_on_hub(hub, hub_secret_namespace(hub_kubeconfig), name, token)
    apply_cluster_profile(hub, name, profile_status(spoke_server(spoke_kubeconfig), ca_b64, name))


def provider_file(bin_path: Path, hub_kubeconfig: Path) -> dict:
    """The access-provider file (cluster-inventory-api pkg/access format) for the lab."""
    return {"providers": [{
        "name": PROVIDER_NAME,
        "execConfig": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(bin_path / "secretreader"),
            "provideClusterInfo": True,
            "env": [{"name": "KUBECONFIG", "value": str(hub_kubeconfig)}],
        },
    }]}


def unregister_spoke(hub_kubeconfig: Path, name: str) -> None:
    """Deletes the spoke's ClusterProfile and its token Secret from the hub."""
    hub = api_client(hub_kubeconfig)
    calls = (
        lambda: client.CustomObjectsApi(hub).delete_namespaced_custom_object(
            GROUP, VERSION, PROFILE_NAMESPACE, PLURAL, name),
        lambda: client.CoreV1Api(hub).delete_namespaced_secret(
            name, hub_secret_namespace(hub_kubeconfig)),
    )
    for call in calls:
        delete_if_present(call)
