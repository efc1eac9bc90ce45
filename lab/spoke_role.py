"""The lab's spoke identity: the ServiceAccount the access provider's token is for, bound
to the ClusterRole knative-fleet derives from a plan (operations.access_roles) instead of
cluster-admin. The lab's stacks install every Knative version of the release mirror with
each ingress and every Eventing source, so the lab's role is the union of those plans'."""

from __future__ import annotations

import itertools
from typing import Any

from config.fleet import parse_fleet_config
from core.errors import PlanError
from operations.access_roles import spoke_documents, spoke_rights, subject
from fleet.rights import policy_rules
from lab.paths import RELEASES

VERSIONS = ("1.22", "1.23")
INGRESSES = ("kourier", "istio", "contour")
SOURCES = ("kafka", "rabbitmq", "redis", "github", "gitlab", "ceph")


def _entry(i: int, version: str, ingress: str, sources: tuple[str, ...]) -> dict[str, Any]:
    return {"name": f"s{i}", "clusterProfileRef": {"name": f"s{i}", "namespace": "lab"},
            "serving": {"version": version, "ingress": {ingress: {"enabled": True}}},
            "eventing": {"version": version,
                         "source": {s: {"enabled": True} for s in sources}}}


def lab_role_documents(account: str, namespace: str) -> list[dict[str, Any]]:
    """The ClusterRole every lab stack's plan fits in, and its binding to the account."""
    rights = set()
    combos = itertools.product(VERSIONS, INGRESSES, (SOURCES, ()))
    for i, (version, ingress, sources) in enumerate(combos):
        cfg = parse_fleet_config({"releaseBase": f"file://{RELEASES}",
                                  "fleet": [_entry(i, version, ingress, sources)]})
        try:
            rights |= spoke_rights(cfg)
        except PlanError:
            continue  # a source without a release for that version: no lab stack has it
    docs = spoke_documents(parse_fleet_config({}), subject(
        f"ServiceAccount:{namespace}/{account}"))
    docs[0]["rules"] = policy_rules(rights)
    return docs
