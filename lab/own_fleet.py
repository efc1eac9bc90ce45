"""The lab's spokes as a platform team's own fleet looks to knative-fleet, for the README's
"Using it on your own fleet": ClusterProfiles with labels in an inventory namespace of
their own, each spoke reached through the lab's access provider as a ServiceAccount that
holds no right until an admin binds one, and a hub identity (a ServiceAccount's token in
a kubeconfig of its own) that holds none either. Nothing of the lab's own fleet is
touched, and `remove` takes it all away."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kubernetes import client

from lab import register
from lab.handle import Cluster, Lab
from lab.idempotent import create_if_absent, delete_if_present


@dataclass(frozen=True)
class Profile:
    """A ClusterProfile of the own fleet: its name, labels and the lab spoke it stands for."""

    name: str
    labels: dict[str, str]
    spoke: Cluster


@dataclass
class OwnFleet:
    lab: Lab
    namespace: str          # the inventory namespace on the hub, made and removed here
    hub_account: str        # in kube-system on the hub: the identity that runs pulumi
    spoke_account: str      # in kube-system on every spoke: the access provider's identity
    profiles: list[Profile] = field(default_factory=list)

    @property
    def hub_subject(self) -> str:
        return f"ServiceAccount:{register.SPOKE_SA_NAMESPACE}/{self.hub_account}"

    @property
    def spoke_subject(self) -> str:
        return f"ServiceAccount:{register.SPOKE_SA_NAMESPACE}/{self.spoke_account}"

    def secret_name(self, profile: Profile) -> str:
        """The hub Secret holding the profile's token, which the lab's plugin reads."""
        return f"{self.namespace}-{profile.name}"

    def create(self, hub_kubeconfig: Path, context: str) -> None:
        """Every ClusterProfile, each spoke's account and token, and the hub identity's
        kubeconfig at `hub_kubeconfig` (its only context `context`)."""
        hub = self.lab.hub.api()
        admin = Path(self.lab.hub.kubeconfig)
        create_if_absent(client.CoreV1Api(hub).create_namespace,
                         {"metadata": {"name": self.namespace}})
        objs = client.CustomObjectsApi(hub)
        for profile in self.profiles:
            token, ca = register.spoke_token(profile.spoke.api(), self.spoke_account,
                                             cluster_role=None)
            register.put_token_on_hub(hub, register.hub_secret_namespace(admin),
                                      self.secret_name(profile), token)
            create_if_absent(
                objs.create_namespaced_custom_object, register.GROUP, register.VERSION,
                self.namespace, register.PLURAL, {
                    "apiVersion": f"{register.GROUP}/{register.VERSION}",
                    "kind": "ClusterProfile",
                    "metadata": {"name": profile.name, "namespace": self.namespace,
                                 "labels": profile.labels},
                    "spec": {"displayName": profile.name,
                             "clusterManager": {"name": "knative-fleet-lab"}}})
            status = register.profile_status(
                register.spoke_server(Path(profile.spoke.kubeconfig)), ca,
                self.secret_name(profile))
            objs.patch_namespaced_custom_object_status(
                register.GROUP, register.VERSION, self.namespace, register.PLURAL,
                profile.name, {"status": status})
        token, _ = register.spoke_token(hub, self.hub_account, cluster_role=None)
        write_token_kubeconfig(admin, token, hub_kubeconfig, context)

    def remove(self, role: str) -> None:
        """The namespace (its profiles and Roles), the tokens, the accounts, and on each
        spoke the ClusterRole and binding named `role` if they are still there."""
        hub = self.lab.hub.api()
        core = client.CoreV1Api(hub)
        secrets = register.hub_secret_namespace(Path(self.lab.hub.kubeconfig))
        for profile in self.profiles:
            delete_if_present(core.delete_namespaced_secret, self.secret_name(profile),
                              secrets)
        delete_if_present(core.delete_namespace, self.namespace)
        _delete_account(hub, self.hub_account)
        for spoke in {p.spoke.name: p.spoke for p in self.profiles}.values():
            api = spoke.api()
            rbac = client.RbacAuthorizationV1Api(api)
            delete_if_present(rbac.delete_cluster_role_binding, role)
            delete_if_present(rbac.delete_cluster_role, role)
            _delete_account(api, self.spoke_account)


def _delete_account(api: client.ApiClient, account: str) -> None:
    core = client.CoreV1Api(api)
    delete_if_present(core.delete_namespaced_secret, f"{account}-token",
                      register.SPOKE_SA_NAMESPACE)
    delete_if_present(core.delete_namespaced_service_account, account,
                      register.SPOKE_SA_NAMESPACE)


def write_token_kubeconfig(admin: Path, token: str, path: Path, context: str) -> None:
    """A kubeconfig for the cluster of `admin` that authenticates with `token` alone."""
    cfg = yaml.safe_load(admin.read_text())
    cluster = {k: v for k, v in cfg["clusters"][0]["cluster"].items()
               if k in ("server", "certificate-authority", "certificate-authority-data")}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "hub", "cluster": cluster}],
        "users": [{"name": context, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "hub", "user": context}}]}))
    path.chmod(0o600)
