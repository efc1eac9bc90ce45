"""What drifted, read from Pulumi's own refresh preview.

`pulumi refresh --preview-only --json` reads every object of the stack from its spoke
and compares it with the state (what the stack applied), without changing the state. A
step `delete` is an object that is gone from the spoke; a step `update` is an object
whose live fields differ, and its `detailedDiff` names the fields. The Kubernetes
provider compares only what the stack wrote, so fields the cluster owns (status,
defaults) are not drift, nor are the fields the cluster writes into what the stack
applied (knative.server_owned: Knative's webhook's rules and CA, aggregated rules).
Steps of resources that are not Kubernetes objects (the provider, the fleet's own
bookkeeping) are left out, but for the steps that hold objects: a component's CRDs-first
step holds its CRDs (fleet.crds_first), its cluster-RBAC step its ClusterRoles and
ClusterRoleBindings (fleet.held_rbac), its namespaced-objects step its ServiceAccounts,
Roles, RoleBindings, Services, autoscalers and disruption budgets
(fleet.held_namespaced), and the refresh of each names those whose applied fields
changed or that are gone (`drifted`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from core.resource_types import CLUSTER_RBAC, CRDS_FIRST, NAMESPACED_OBJECTS
from knative.server_owned import server_owned_fields

DELETED = "deleted"
CHANGED = "changed"


@dataclass(frozen=True)
class Drift:
    """One object of one spoke that is no longer as the stack applied it."""

    spoke: str
    kind: str
    namespace: str
    name: str
    change: str
    fields: tuple[str, ...] = ()
    # field -> (what the stack applied, what is live), as short text
    values: tuple[tuple[str, str, str], ...] = ()

    @property
    def object(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    def line(self) -> str:
        if self.change == DELETED:
            return f"{self.spoke}: {self.object} was deleted"
        shown = [f"{f} (applied {a}, live {b})" for f, a, b in self.values] or list(self.fields)
        return f"{self.spoke}: {self.object} changed: {', '.join(shown) or '(fields)'}"


@dataclass
class DriftReport:
    drifts: list[Drift] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # spoke -> objects read
    errors: list[str] = field(default_factory=list)

    def by_spoke(self) -> dict[str, list[Drift]]:
        out: dict[str, list[Drift]] = {spoke: [] for spoke in sorted(self.checked)}
        for d in self.drifts:
            out.setdefault(d.spoke, []).append(d)
        return out

    def to_json(self) -> dict:
        return {"drift": [asdict(d) for d in self.drifts], "checked": self.checked,
                "errors": self.errors}


def _object(step: Mapping) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a Kubernetes object step, else None."""
    state = step.get("oldState") or step.get("newState") or {}
    typ = state.get("type") or ""
    if not typ.startswith("kubernetes:") or typ.startswith("pulumi:providers"):
        return None
    obj = state.get("outputs") or state.get("inputs") or {}
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or typ.rsplit(":", 1)[-1]
    return kind, meta.get("namespace") or "", meta.get("name") or ""


def _spoke(step: Mapping) -> str:
    return step["urn"].rsplit("::", 1)[-1].split(":", 1)[0]


def _cluster_owned(step: Mapping) -> tuple[str, ...]:
    """The paths of the object the cluster writes (knative.server_owned: a webhook's rules
    and CA, aggregated rules), each followed by what ends a path segment: changes there
    are the cluster's, not drift, as the stack's `ignoreChanges` says."""
    applied = (step.get("oldState") or {}).get("inputs") or {}
    if "kind" not in applied or "metadata" not in applied:
        return ()
    return tuple(p + end for p in server_owned_fields(applied) for end in (".", "["))


def _fields(step: Mapping) -> tuple[str, ...]:
    diff = step.get("detailedDiff") or {}
    owned = _cluster_owned(step)
    keys = sorted(k for k in diff if not k.startswith(("status", "metadata.managedFields",
                                                       "metadata.resourceVersion"))
                  and not k.startswith(owned) and f"{k}." not in owned)
    return tuple(keys)


_TOKEN = re.compile(r'\["([^"]+)"\]|\[(\d+)\]|([^.\[\]]+)')
_MISSING = object()


def value_at(obj: object, path: str) -> object:
    """The value at a detailedDiff path (`spec.containers[0].image`,
    `metadata.labels["app.kubernetes.io/name"]`), or a marker when it is not there."""
    for quoted, index, plain in _TOKEN.findall(path):
        if index:
            if not isinstance(obj, list) or int(index) >= len(obj):
                return _MISSING
            obj = obj[int(index)]
        else:
            if not isinstance(obj, Mapping) or (quoted or plain) not in obj:
                return _MISSING
            obj = obj[quoted or plain]
    return obj


def _short(value: object) -> str:
    text = "(none)" if value is _MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _values(step: Mapping, fields: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    applied = (step.get("oldState") or {}).get("outputs") or {}
    live = (step.get("newState") or {}).get("outputs") or {}
    return tuple((f, _short(value_at(applied, f)), _short(value_at(live, f))) for f in fields)


CRD_KIND = "CustomResourceDefinition"
# The steps that hold objects, and the output that lists what each holds.
HOLDING_STEPS = {CRDS_FIRST.type: "crds", CLUSTER_RBAC.type: "objects",
                 NAMESPACED_OBJECTS.type: "objects"}


def _held(step: Mapping, report: DriftReport) -> None:
    """A holding step's refresh: each object it holds checked, the drifted ones named (a
    CRD by its name, another object by `Kind/name` or `Kind/namespace/name`)."""
    spoke = _spoke(step)
    old_state = step.get("oldState") or {}
    old = old_state.get("outputs") or {}
    new = (step.get("newState") or {}).get("outputs") or {}
    report.checked[spoke] = (report.checked.get(spoke, 0)
                             + len(old.get(HOLDING_STEPS[old_state["type"]]) or []))
    for drift in new.get("drifted") or []:
        change = DELETED if drift.get("change") == "deleted" else CHANGED
        name = str(drift.get("name"))
        parts = name.split("/", 2)
        kind, namespace, name = (
            (CRD_KIND, "", name) if len(parts) == 1
            else (parts[0], "", parts[1]) if len(parts) == 2 else tuple(parts))
        report.drifts.append(Drift(spoke, kind, namespace, name, change,
                                   ("the fields the fleet applied",) if change == CHANGED
                                   else ()))


def with_refreshed(doc: dict, event_lines: list[str]) -> dict:
    """The refresh preview's document with each CRDs-first step as its refresh read it,
    from the engine's event log (`resOutputsEvent`): the document keeps a refresh's
    result only when the provider gave a detailed diff, which a dynamic resource
    cannot."""
    read: dict[str, dict] = {}
    for line in event_lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        meta = (event.get("resOutputsEvent") or {}).get("metadata") or {}
        if meta.get("type") in HOLDING_STEPS and meta.get("op") == "update":
            read[str(meta.get("urn"))] = meta
    for step in doc.get("steps") or []:
        meta = read.get(str(step.get("urn")))
        if meta is not None:
            step["op"] = "update"
            step["newState"] = meta.get("new") or step.get("newState")
    return doc


def findings(doc: Mapping) -> DriftReport:
    report = DriftReport()
    for step in doc.get("steps") or []:
        if ((step.get("oldState") or {}).get("type")) in HOLDING_STEPS:
            _held(step, report)
            continue
        obj = _object(step)
        if obj is None:
            continue
        spoke = _spoke(step)
        report.checked[spoke] = report.checked.get(spoke, 0) + 1
        op = step.get("op")
        if op == "delete":
            report.drifts.append(Drift(spoke, *obj, DELETED))
        elif op in ("update", "replace"):
            fields = _fields(step)
            if fields or not step.get("detailedDiff"):
                report.drifts.append(Drift(spoke, *obj, CHANGED, fields,
                                           _values(step, fields)))
    report.errors = [d.get("message", "").strip() for d in doc.get("diagnostics") or []
                     if d.get("severity") == "error"]
    return report
