"""The ClusterProfile snapshot the offline review reads instead of the hub.

`python -m review profiles --stack S > profiles.json` lists the ClusterProfiles of the
stack's inventory namespaces (its groups' and entries' namespaces: the hub Role
`python -m operations rights --only hub` prints grants exactly `get` and `list` there), with
a read-only hub credential, and writes them as one JSON document. A profile holds how
to reach its spoke (server, CA, provider names), no credential; managedFields are
dropped.

    schema      "knative-fleet-profiles/1"
    takenAt     when the hub was read (UTC, RFC 3339)
    namespaces  [string]: the namespaces listed
    profiles    [ClusterProfile]: as the hub serves them
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from access.hub import hub_api_client, list_cluster_profiles
from config.fleet import FleetConfig
from operations.access_roles import inventory_namespaces

SCHEMA = "knative-fleet-profiles/1"


@dataclass(frozen=True)
class ProfileSnapshot:
    namespaces: tuple[str, ...]
    profiles: tuple[dict[str, Any], ...]
    taken_at: str | None = None

    def in_namespace(self, namespace: str) -> list[dict[str, Any]]:
        return [p for p in self.profiles
                if (p.get("metadata") or {}).get("namespace") == namespace]

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((p for p in self.in_namespace(namespace)
                     if (p.get("metadata") or {}).get("name") == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "takenAt": self.taken_at,
                "namespaces": list(self.namespaces), "profiles": list(self.profiles)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ProfileSnapshot:
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"not a ClusterProfile snapshot (schema {doc.get('schema')!r}, "
                             f"expected {SCHEMA!r}); take one with `python -m review "
                             "profiles --stack <stack>`")
        return cls(tuple(doc.get("namespaces") or ()), tuple(doc.get("profiles") or ()),
                   doc.get("takenAt"))

    @classmethod
    def load(cls, path: str | Path) -> ProfileSnapshot:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def _trimmed(profile: Mapping[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (profile.get("metadata") or {}).items() if k != "managedFields"}
    return {**profile, "metadata": meta}


def snapshot_of(namespaces: Iterable[str], profiles: Iterable[Mapping[str, Any]],
                now: datetime | None = None) -> ProfileSnapshot:
    taken = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ordered = sorted((_trimmed(p) for p in profiles),
                     key=lambda p: (p["metadata"].get("namespace", ""),
                                    p["metadata"].get("name", "")))
    return ProfileSnapshot(tuple(sorted(set(namespaces))), tuple(ordered), taken)


def take_snapshot(cfg: FleetConfig, kubeconfig: str | None = None,
                  context: str | None = None) -> ProfileSnapshot:
    """Lists the stack's inventory namespaces on the hub (the stack's hub, or the
    kubeconfig given: a read-only credential is enough); raises ProfileError."""
    namespaces = inventory_namespaces(cfg)
    api = hub_api_client(kubeconfig or cfg.hub.kubeconfig,
                         context if kubeconfig else (context or cfg.hub.context))
    with api:
        found = [p for ns in namespaces for p in list_cluster_profiles(api, ns)]
    return snapshot_of(namespaces, found)
