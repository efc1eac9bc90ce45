"""What a fleet preview changes, per spoke: the typed summary the Markdown and JSON
reports are written from.

Built from the engine's `steps` and `diagnostics` only (pure, plain dicts in). The
Stack step's old outputs give each spoke's versions and wave before the run; object
labels give the versions after it; error diagnostics `spoke 'x': Reason: message`
name the spokes that could not be resolved (and so are left untouched).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.resource_types import (
    APPROVAL_GATE,
    CLUSTER_RBAC,
    CRD_TYPE,
    CRDS_FIRST,
    HELD_TYPES,
    NAMESPACED_OBJECTS,
    SPOKE_TYPE,
    STACK_TYPE,
)
from review.fields import FieldChange, object_diff
from review.held_objects import (
    crd_changes,
    crd_key,
    held_bodies,
    held_field_changes,
    kind_key,
    object_changes,
)
from review.resources import NAMESPACE_TYPE, Resource, resource
from review.versions import COMPONENTS, VersionChange, commonest, component_of

# The engine's step ops, as what happens to the resource; other ops change nothing.
OPS = {
    "create": "created", "import": "created",
    "update": "updated",
    "replace": "replaced", "create-replacement": "replaced", "delete-replaced": "replaced",
    "discard-replaced": "replaced",
    "delete": "deleted", "discard": "deleted",
}
COUNTS = ("created", "updated", "replaced", "deleted")
# "Needs a human", in the order the report shows them.
CATEGORIES = {
    "errors": "Preview errors",
    "unresolved": "Unreachable spokes",
    "deletes": "Deletes",
    "replaces": "Replaces",
    "namespaces": "Namespace deletions",
    "crds": "CRD changes",
    "rbac": "ClusterRole and ClusterRoleBinding changes",
    "versions": "Version steps",
    "approvals": "Waits for approval",
}
_SPOKE_ERROR = re.compile(r"(?:error: )?spoke '([^']+)': ([A-Z][A-Za-z]+): (.*)", re.DOTALL)
_FIX = ". Fix: "
# What the Python SDK puts before the error a dynamic resource's step raised.
_SDK_WORDING = "Exception calling application: "
# Pulumi's own last line of every failed program; the errors before it say why.
_PROGRAM_FAILED = "an unhandled error occurred: program exited with non-zero exit code"
_OP_ORDER = {op: i for i, op in enumerate(("deleted", "replaced", "created", "updated"))}


@dataclass(frozen=True)
class ObjectChange:
    resource: Resource
    op: str  # one of COUNTS
    fields: tuple[FieldChange, ...] = ()
    replace_reasons: tuple[str, ...] = ()
    # A delete that leaves the object on the spoke (`retainOnDelete`): it leaves the state.
    kept: bool = False
    # A CRDs-first step's change: ((op, CRD name), ...) of the CRDs it holds.
    crds: tuple[tuple[str, str], ...] = ()
    # A cluster-RBAC step's change: ((op, "Kind/name"), ...) of the objects it holds.
    roles: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return self.resource.label + (" (kept on the spoke)" if self.kept else "")


@dataclass(frozen=True)
class Unresolved:
    spoke: str
    reason: str
    message: str
    fix: str = ""


@dataclass(frozen=True)
class Problem:
    """One thing a reviewer must look at before approving."""

    category: str  # a key of CATEGORIES
    spoke: str | None  # None: the fleet or the whole preview
    text: str
    objects: tuple[str, ...] = ()


@dataclass
class SpokeSummary:
    name: str
    wave: str | None
    serving: VersionChange
    eventing: VersionChange
    objects: list[ObjectChange] = field(default_factory=list)
    added: bool = False  # its Spoke component is created: a new spoke
    removed: bool = False  # its Spoke component is deleted: the spoke is uninstalled
    unresolved: Unresolved | None = None

    @property
    def counts(self) -> dict[str, int]:
        return {op: sum(1 for o in self.objects if o.op == op) for op in COUNTS}


@dataclass
class Summary:
    stack: str | None
    exit_code: int
    spokes: list[SpokeSummary]
    fleet: list[ObjectChange]  # changes of fleet-level resources
    unresolved: list[Unresolved]
    errors: list[str]  # error diagnostics that name no spoke
    warnings: list[str]
    needs_human: list[Problem]
    unchanged: list[str]  # spokes of the last run this preview does not change
    same: int  # resources the engine leaves as they are

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def totals(self) -> dict[str, int]:
        objects = [o for s in self.spokes for o in s.objects] + self.fleet
        return {op: sum(1 for o in objects if o.op == op) for op in COUNTS}

    @property
    def noop(self) -> bool:
        return self.ok and not any(self.totals.values()) and not self.needs_human


def natural(name: str) -> tuple:
    """spoke-2 before spoke-10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _stack_outputs(steps: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    for step in steps:
        state = step.get("oldState") or {}
        if state.get("type") == STACK_TYPE:
            return dict(state.get("outputs") or {})
    return {}


# The steps that hold objects, and how each names one (review.held_objects).
HOLDING_KEYS = {CRDS_FIRST.type: crd_key, CLUSTER_RBAC.type: kind_key,
                NAMESPACED_OBJECTS.type: kind_key}
# What each step that holds objects other than CRDs names them as, in the review.
HELD_NAMES = {CLUSTER_RBAC.type: "ClusterRole(s) and ClusterRoleBinding(s)",
              NAMESPACED_OBJECTS.type: "ServiceAccount(s), Role(s), RoleBinding(s), "
                                       "Service(s), autoscaler(s) and disruption "
                                       "budget(s)"}


def _typed_held(steps: list[Mapping[str, Any]]) -> dict[tuple[str | None, str], dict]:
    """{(spoke, key): inputs} of the typed resources of objects a step holds that the
    run still registers (a state of an earlier release: fleet.held_typed), keyed as the
    step keys them (review.held_objects.kind_key)."""
    out = {}
    for step in steps:
        new = step.get("newState") or {}
        inputs = new.get("inputs") or {}
        name = (inputs.get("metadata") or {}).get("name")
        if new.get("type") in HELD_TYPES[1:] and step.get("op") != "delete" and name:
            spoke = resource({"urn": step.get("urn"), "newState": new}).spoke
            kind = str(new["type"]).rsplit(":", 1)[-1]
            out[(spoke, kind_key({**inputs, "kind": kind}))] = inputs
    return out


def _taken_over(roles: tuple[tuple[str, str], ...], spoke: str | None,
                typed: Mapping[tuple[str | None, str], dict], new: Mapping[str, Any]
                ) -> tuple[tuple[str, str], ...]:
    """A new cluster-RBAC step's `created` objects that a typed resource of the state
    holds already: `taken over` when the body is the same, else `updated`."""
    if not any((spoke, key) in typed for op, key in roles if op == "created"):
        return roles
    bodies = {kind_key(b): b for b in held_bodies(new)}
    return tuple(
        ("taken over" if typed[(spoke, key)] == bodies.get(key) else "updated", key)
        if op == "created" and (spoke, key) in typed else (op, key)
        for op, key in roles)


def _changes(steps: list[Mapping[str, Any]]) -> list[tuple[ObjectChange, dict, dict]]:
    """One change per resource (a replacement is up to three steps), with the old and
    new state it was read from."""
    typed = _typed_held(steps)
    by_urn: dict[str, list[Mapping[str, Any]]] = {}
    for step in steps:
        if step.get("op") in OPS:
            by_urn.setdefault(str(step.get("urn")), []).append(step)
    out = []
    for group in by_urn.values():
        ops = {OPS[s["op"]] for s in group}
        op = "replaced" if "replaced" in ops else OPS[group[0]["op"]]
        old = next((s["oldState"] for s in group if s.get("oldState")), {})
        new = next((s["newState"] for s in group if s.get("newState")), {})
        detailed = next((s["detailedDiff"] for s in group if s.get("detailedDiff")), None)
        reasons = sorted({r for s in group for r in s.get("replaceReasons") or []})
        fields = object_diff(old, new, detailed) if op in ("updated", "replaced") else []
        res = resource({"urn": group[0].get("urn"), "newState": new, "oldState": old})
        if res.type in HOLDING_KEYS and op == "updated":
            # The objects' own fields, not the step's compressed manifest.
            fields = held_field_changes(old, new, HOLDING_KEYS[res.type]) or fields
        # A typed CRD, ClusterRole or ClusterRoleBinding kept on delete leaves the spoke's
        # object as it is, held by its step (fleet.held_typed); other objects kept on
        # delete (an aggregated ClusterRole) have a step of the fleet's that deletes them.
        kept = (op == "deleted" and res.type in HELD_TYPES and bool(old.get("retainOnDelete"))
                and "aggregationRule" not in (old.get("inputs") or {}))
        crds = crd_changes(old, new) if res.type == CRDS_FIRST.type and op in (
            "created", "updated") else ()
        roles = _taken_over(object_changes(old, new), res.spoke, typed, new) \
            if res.type in HELD_NAMES and op in ("created", "updated") else ()
        out.append((ObjectChange(res, op, tuple(fields), tuple(reasons), kept, crds, roles),
                     old, new))
    return sorted(out, key=lambda c: _order(c[0]))


def _version(component: str, name: str, outputs: Mapping[str, Any],
             changes: list[tuple[ObjectChange, dict, dict]], removed: bool) -> VersionChange:
    """Before: the last run's output, else the old objects' labels. After: the new
    objects' labels; without any, unchanged unless the component's Deployments go."""
    old_labels: list[str] = []
    new_labels: list[str] = []
    deployments_gone = False
    for change, old, new in changes:
        was = component_of(old) if change.op != "created" else None
        now = component_of(new) if change.op != "deleted" else None
        if was and was[0] == component:
            old_labels.append(was[1])
            deployments_gone |= change.op == "deleted" and change.resource.kind == "Deployment"
        if now and now[0] == component:
            new_labels.append(now[1])
    output = (outputs.get(name) or {}).get(component)
    before = output if isinstance(output, str) else commonest(old_labels)
    after = commonest(new_labels)
    if after is None:
        after = None if removed or deployments_gone else before
    return VersionChange(before, after)


def _diagnostics(diagnostics: Iterable[Mapping[str, Any]]) \
        -> tuple[list[Unresolved], list[str], list[str]]:
    unresolved: dict[str, Unresolved] = {}
    errors: list[str] = []
    warnings: list[str] = []
    for d in diagnostics:
        message = str(d.get("message", "")).strip()
        if d.get("severity") == "warning" and message not in warnings:
            warnings.append(message.removeprefix("warning: "))
        if d.get("severity") != "error":
            continue
        m = _SPOKE_ERROR.fullmatch(message)
        if m:
            text, _, fix = m[3].partition(_FIX)
            unresolved.setdefault(m[1], Unresolved(m[1], m[2], text.strip(), fix.strip()))
            continue
        message = message.removeprefix("error: ").removeprefix(_SDK_WORDING)
        if d.get("urn"):
            message = f"{resource({'urn': d['urn']}).label}: {message}"
        if message not in errors:
            errors.append(message)
    if len(errors) > 1 or unresolved:
        errors = [e for e in errors if not e.startswith(_PROGRAM_FAILED)]
    return sorted(unresolved.values(), key=lambda u: natural(u.spoke)), errors, warnings


# The program's info line on each spoke in a rollout (components.fleet): the wave this
# run puts the spoke in, known for a new spoke too.
_WAVE = re.compile(r"wave '([^']+)' \(\d+ of the rollout\)")


def _waves(diagnostics: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    out = {}
    for d in diagnostics:
        m = _WAVE.search(str(d.get("message", "")))
        if m and d.get("urn"):
            out[str(d["urn"]).rsplit("::", 1)[-1]] = m[1]
    return out


def _order(change: ObjectChange) -> tuple:
    return _OP_ORDER[change.op], change.resource.kind, natural(change.resource.name)


def _problems(spoke: SpokeSummary) -> list[Problem]:
    out = []
    if spoke.unresolved:
        u = spoke.unresolved
        fix = f" Fix: {u.fix}" if u.fix else ""
        out.append(Problem("unresolved", spoke.name,
                           f"{u.reason}: {u.message}; left untouched.{fix}"))
    out += _object_problems(spoke.name, spoke.objects, spoke.removed)
    for component in COMPONENTS:
        version: VersionChange = getattr(spoke, component)
        if version.changed:
            out.append(Problem("versions", spoke.name,
                               f"{component.capitalize()} {version.before or 'none'} -> "
                               f"{version.after or 'none'} ({version.step()})"))
    return out


def _object_problems(spoke: str | None, objects: list[ObjectChange],
                     removed: bool = False) -> list[Problem]:
    out = []
    deleted = [o.resource.label for o in objects if o.op == "deleted" and not o.kept]
    if deleted:
        whole = " (the spoke is uninstalled: all its resources)" if removed else ""
        out.append(Problem("deletes", spoke, f"{len(deleted)} deleted{whole}", tuple(deleted)))
    replaced = [o for o in objects if o.op == "replaced"]
    if replaced:
        out.append(Problem("replaces", spoke, f"{len(replaced)} replaced (deleted, then "
                           "created again: a new uid)", tuple(
                               o.resource.label + (f" ({', '.join(o.replace_reasons)})"
                                                   if o.replace_reasons else "")
                               for o in replaced)))
    namespaces = [o.resource.name for o in objects
                  if o.resource.type == NAMESPACE_TYPE and o.op in ("deleted", "replaced")]
    if namespaces:
        out.append(Problem("namespaces", spoke, f"{len(namespaces)} namespace(s) deleted, "
                           "with everything in them", tuple(namespaces)))
    for op in ("updated", "replaced", "deleted"):
        crds = [o.resource.name for o in objects
                if o.resource.type == CRD_TYPE and o.op == op and not o.kept]
        crds += [name for o in objects for what, name in o.crds if what == op]
        if crds:
            out.append(Problem("crds", spoke, f"{len(crds)} CRD(s) {op}", tuple(crds)))
    removed = [name for o in objects for what, name in o.crds if what == "removed"]
    if removed:
        out.append(Problem("crds", spoke, f"{len(removed)} CRD(s) no longer in the release: "
                           "kept on the spoke (deleted on destroy with deleteCrdsOnDestroy)",
                           tuple(removed)))
    again = [name for o in objects for what, name in o.crds if what == "reapplied"]
    if again:
        out.append(Problem("crds", spoke, f"{len(again)} drifted CRD(s) applied again",
                           tuple(again)))
    for step_type, names in HELD_NAMES.items():
        for op in ("created", "updated", "replaced", "removed", "reapplied", "taken over"):
            roles = [name for o in objects if o.resource.type == step_type
                     for what, name in o.roles if what == op]
            if roles:
                what = {"replaced": "replaced (a binding's roleRef changed: deleted, then "
                                    "created again)",
                        "removed": "deleted: no longer in the release",
                        "reapplied": "drifted, applied again",
                        "taken over": "taken over from their typed resources, unchanged"
                        }.get(op, op)
                out.append(Problem("rbac", spoke, f"{len(roles)} {names} {what}",
                                   tuple(roles)))
    released = [o.resource.name for o in objects if o.resource.type == CRD_TYPE and o.kept]
    if released:
        out.append(Problem("crds", spoke, f"{len(released)} typed CRD resource(s) leave the "
                           "state; the CRDs stay on the spoke, held by their CRDs-first step",
                           tuple(released)))
    released = [o.resource.name for o in objects if o.resource.type != CRD_TYPE and o.kept]
    if released:
        out.append(Problem("rbac", spoke, f"{len(released)} typed resource(s) of objects a "
                           "step holds (ClusterRoles, their bindings, ServiceAccounts, Roles, "
                           "RoleBindings, Services, autoscalers, disruption budgets) leave "
                           "the state; the objects stay on the "
                           "spoke, held by their step", tuple(released)))
    return out


def approvals(steps: Iterable[Mapping[str, Any]]) -> list[Problem]:
    """The waves a run applies only when a person approved them: those whose approval
    gate (components.approval_gate) the preview plans to create or update."""
    out = []
    for step in steps:
        new = step.get("newState") or {}
        if new.get("type") != APPROVAL_GATE.type or step.get("op") not in ("create", "update"):
            continue
        inputs = new.get("inputs") or {}
        wave = str(inputs.get("wave"))
        spokes = [str(n) for n in inputs.get("spokes") or []]
        out.append(Problem("approvals", None, (
            f"wave '{wave}' changes {len(spokes)} spoke(s): `pulumi up` applies the waves "
            f"before it, then waits for a person's approval (KNATIVE_FLEET_APPROVE={wave}, "
            f"or python -m runner up --approve {wave})"), tuple(spokes)))
    return sorted(out, key=lambda p: p.text)


def summarise(document: Mapping[str, Any], exit_code: int = 0,
              stack: str | None = None) -> Summary:
    """The summary of one `pulumi preview --json` document."""
    steps = list(document.get("steps") or [])
    outputs = (_stack_outputs(steps).get("spokes") or {})
    unresolved, errors, warnings = _diagnostics(document.get("diagnostics") or [])
    waves = _waves(document.get("diagnostics") or [])
    per_spoke: dict[str, list[tuple[ObjectChange, dict, dict]]] = {}
    fleet: list[ObjectChange] = []
    for change in _changes(steps):
        if change[0].resource.spoke is None:
            fleet.append(change[0])
        else:
            per_spoke.setdefault(change[0].resource.spoke, []).append(change)
    names = sorted(per_spoke.keys() | {u.spoke for u in unresolved}, key=natural)
    broken = {u.spoke: u for u in unresolved}
    spokes = []
    for name in names:
        changes = per_spoke.get(name, [])
        own = [c for c, _, _ in changes if c.resource.type == SPOKE_TYPE]
        removed = any(c.op == "deleted" for c in own)
        wave = waves.get(name) or (outputs.get(name) or {}).get("wave")
        spokes.append(SpokeSummary(
            name, wave if isinstance(wave, str) else None,
            *(_version(c, name, outputs, changes, removed) for c in COMPONENTS),
            objects=[c for c, _, _ in changes], added=any(c.op == "created" for c in own),
            removed=removed, unresolved=broken.get(name)))
    problems = [Problem("errors", None, e) for e in errors]
    for spoke in spokes:
        problems += _problems(spoke)
    problems += _object_problems(None, fleet)
    problems += approvals(steps)
    problems.sort(key=lambda p: list(CATEGORIES).index(p.category))
    unchanged = sorted(set(outputs) - set(names), key=natural)
    same = int((document.get("changeSummary") or {}).get("same", 0))
    return Summary(stack, exit_code, spokes, fleet, unresolved, errors, warnings, problems,
                   unchanged, same)
