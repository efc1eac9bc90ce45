"""A kubeconfig for a lab spoke as a ClusterProfile gives it: the cluster from the
profile's access provider, the user the `secretreader` exec plugin (no credential in
the file), for the small Pulumi programs of the lab tests."""

from __future__ import annotations

from kubernetes import client

from lab.handle import Lab


def profile_cluster(lab: Lab, spoke: str) -> dict:
    objs = client.CustomObjectsApi(lab.hub.api())
    profile = objs.get_namespaced_custom_object(
        "multicluster.x-k8s.io", "v1alpha1", "fleet-system", "clusterprofiles", spoke)
    return profile["status"]["accessProviders"][0]["cluster"]


def exec_kubeconfig(lab: Lab, spoke: str) -> dict:
    cluster = profile_cluster(lab, spoke)
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": spoke,
        "clusters": [{"name": spoke, "cluster": cluster}],
        "contexts": [{"name": spoke, "context": {"cluster": spoke, "user": spoke}}],
        "users": [{"name": spoke, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(lab.bin / "secretreader"),
            "env": [{"name": "KUBECONFIG", "value": lab.hub.kubeconfig}],
            "provideClusterInfo": True, "interactiveMode": "Never"}}}],
    }
