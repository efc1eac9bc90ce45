"""Plain objects the unit tests share."""

from __future__ import annotations

from typing import Any

from access import SpokeConnection


def spoke_connection() -> SpokeConnection:
    """A connection to a local spoke through the `secretreader` plugin."""
    return SpokeConnection(
        server="https://127.0.0.1:6443", certificate_authority_data=None, proxy_url=None,
        tls_server_name=None, insecure_skip_tls_verify=False, provider_name="secretreader",
        exec_api_version="client.authentication.k8s.io/v1", command="/bin/secretreader",
        args=(), env=(), provide_cluster_info=True, exec_extension={"clusterName": "s"})


def deployment(generation: int = 2, observed: int = 2, replicas: int = 1,
               updated: int = 1, available: int = 1, available_status: str = "True",
               progressing_reason: str = "NewReplicaSetAvailable") -> dict:
    return {
        "metadata": {"name": "controller", "generation": generation},
        "spec": {"replicas": replicas},
        "status": {"observedGeneration": observed, "updatedReplicas": updated,
                   "availableReplicas": available,
                   "conditions": [
                       {"type": "Available", "status": available_status,
                        "reason": "MinimumReplicasAvailable", "message": "ok"},
                       {"type": "Progressing", "status": "True",
                        "reason": progressing_reason, "message": "rs progressing"}]},
    }


class FakeInventory:
    """An inventory without a hub (access.inventory.Inventory): every spoke reached at
    `spoke_connection()` on Kubernetes 1.36 with no Knative yet, unless `broken` names
    the ResolutionError of its ClusterProfile; `profiles` are what the hub lists."""

    def __init__(self, profiles: list[dict] | None = None,
                 broken: dict[str, Any] | None = None,
                 facts: dict[str, Any] | None = None) -> None:
        self.profiles = profiles or []
        self.broken = broken or {}
        self.facts = facts or {}
        self.reached: list[tuple[str, str, str, tuple[str, ...]]] = []

    def open(self) -> None:
        pass

    def cluster_profiles(self, namespace: str) -> list[dict]:
        return [p for p in self.profiles if p["metadata"]["namespace"] == namespace]

    def reach(self, spoke: str, namespace: str, name: str,
              install_namespaces: Any) -> Any:
        from access import PluginCredential, ResolutionError, ResolvedSpoke, SpokeFacts

        self.reached.append((spoke, namespace, name, tuple(install_namespaces)))
        if name in self.broken:
            raise ResolutionError(spoke, self.broken[name], f"{name} is broken")
        return ResolvedSpoke(spoke_connection(), PluginCredential(token="t"), "v1.36.3",
                             self.facts.get(name) or SpokeFacts(namespaces={}, installed={}))


def profile(name: str, namespace: str = "f", **labels: str) -> dict:
    """A ClusterProfile as the hub lists it."""
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}}


def two_spoke_fleet() -> Any:
    """A stack of two explicit entries: spoke-a with Serving and Eventing 1.23, spoke-b
    with Serving 1.22, both from the release mirror."""
    from config.fleet import parse_fleet_config
    from lab.paths import RELEASES

    return parse_fleet_config({
        "releaseBase": f"file://{RELEASES}",
        "fleet": [
            {"name": "spoke-a", "clusterProfileRef": {"name": "a", "namespace": "f"},
             "serving": {"version": "1.23"}, "eventing": {"version": "1.23"}},
            {"name": "spoke-b", "clusterProfileRef": {"name": "b", "namespace": "f"},
             "serving": {"version": "1.22"}},
        ],
    })


def reviewed_fleet(release_base: str | None = None, **serving: object) -> dict:
    """The review tests' stack: spokes a and b in group g (Serving 1.23, with `serving`'s
    keys) and solo (Serving 1.22)."""
    from lab.paths import RELEASES

    return {"releaseBase": release_base or f"file://{RELEASES}",
            "groups": [{"name": "g", "namespace": "f", "selector": {"matchLabels": {
                "env": "prod"}}, "serving": {"version": "1.23", **serving}}],
            "fleet": [{"name": "solo", "clusterProfileRef": {"name": "solo",
                                                             "namespace": "f"},
                       "serving": {"version": "1.22"}}]}


def reviewed_profiles() -> list[dict]:
    """The ClusterProfiles the review tests' stack selects from."""
    return [profile("a", env="prod"), profile("b", env="prod"), profile("solo")]
