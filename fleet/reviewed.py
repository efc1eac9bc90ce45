"""The reviewed plan is the plan that lands: a digest of everything a run registers,
computed by the program itself before it registers anything.

A review (`python -m review`) records the digests of its preview's plan: one per
spoke (its install, its connection and the Kubernetes provider's configuration, or why
it cannot be reached) and one for the fleet (the stack, its ring, the membership, the
waves, their gates and what fails the run), and, beside them, a digest per object and
per setting of each part, so that a refusal can say which objects and settings moved.
An `up` given that review (KNATIVE_FLEET_REVIEWED) computes the same digests from its
own plan, and when any part differs it fails with nothing registered, naming what
differs: a stack file edited, a ClusterProfile relabelled, a release file changed at
the release base, a spoke that answers differently, all between the review and the
apply, in the same process that would have applied them, so nothing can slip in
between a check and the apply. Only the parts bind the run (the whole digest is theirs);
the detail only explains a refusal, so a report written before it existed still binds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.digest import digest
from core.errors import NotReviewed
from fleet.plan import FleetPlan, PlannedObject, PlannedStage, SpokePlan

FLEET = "fleet"
# Objects named per spoke in a refusal; the rest are counted.
SHOWN_OBJECTS = 10
# `sha256:` and 16 hex digits (64 bits) per object and setting of the detail.
DETAIL_CHARS = 23

# What each setting of a part is, as a refusal names it, in the order it names them.
# Beside the spoke's settings, each object of its install has a digest of its own.
FLEET_SETTINGS = {
    "ring": "the stack's ring (the stack file)",
    "membership": "the membership: which ClusterProfiles are selected, and their labels",
    "waves": "the waves, their spokes or their gates (the stack file or ClusterProfile "
             "labels)",
    "failure": "what fails the run",
}
SPOKE_SETTINGS = {
    "reached": "whether it is reached, or why not",
    "placement": "its ClusterProfile, group or wave (the stack file or ClusterProfile "
                 "labels)",
    "kubernetes": "the Kubernetes version the spoke answers with",
    "versions": "the Knative versions planned for it (the stack file, or what the spoke "
                "runs now)",
    "connection": "its connection or its Kubernetes provider's configuration (the "
                  "ClusterProfile, the access-provider file or the stack file)",
    "install": "its install's order or options (stages, guards, gates, the owner record)",
}
# Fields of SpokePlan in each setting; a field not named here is part of `install`.
_SPOKE_FIELDS = {"placement": ("cluster_profile", "group", "wave"),
                 "connection": ("connection",), "kubernetes": ("server_version",),
                 "versions": ("versions",), "reached": ("error",)}
# Fields of SpokeInstall that are its connection, not its install.
_INSTALL_CONNECTION = ("kubeconfig", "identifier", "connection", "plugin_timeout_s")


@dataclass(frozen=True)
class PlanDigest:
    """A run's plan as digests: the whole, and each part (`fleet`, `spoke <name>`).
    `detail` holds, per part, a digest per setting (`settings`) and per object
    (`objects`, keyed `Kind namespace/name`): what a refusal names. A review written
    before the detail existed has none."""

    stack: str
    parts: dict[str, str]
    detail: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return digest({"stack": self.stack, "parts": self.parts})

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "digest": self.digest, "parts": dict(self.parts),
                "detail": {part: {kind: dict(digests) for kind, digests in d.items()}
                           for part, d in self.detail.items()}}


def object_key(obj: PlannedObject) -> str:
    """`Kind namespace/name`, or `Kind name` for a cluster-scoped object."""
    meta = obj.body.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{obj.body.get('kind')} {f'{namespace}/' if namespace else ''}{meta.get('name')}"


def _shape(value: Any) -> Any:
    """`value` as plain data without the objects of its stages (each object's digest
    holds its stage) and with any other planned object replaced by its key: the order
    and options around the objects, so an object added is not also a changed order."""
    if isinstance(value, PlannedObject):
        return object_key(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _shape(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (isinstance(value, PlannedStage) and f.name == "objects")}
    if isinstance(value, (list, tuple)):
        return [_shape(v) for v in value]
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return value


def _brief(value: Any) -> str:
    """A detail's digest, shortened: it only names what moved (the parts bind the run),
    and a fleet's report holds one per object of every spoke."""
    return digest(value)[:DETAIL_CHARS]


def _fleet_detail(plan: FleetPlan) -> dict[str, dict[str, str]]:
    """The fleet part's settings, each digested alone."""
    return {"settings": {
        "ring": _brief(plan.ring), "membership": _brief(plan.membership),
        "waves": _brief({"showsWaves": plan.shows_waves, "waves": plan.waves}),
        "failure": _brief(plan.failure)}}


def _spoke_detail(spoke: SpokePlan) -> dict[str, dict[str, str]]:
    """A spoke part's settings and objects, each digested alone; a field no setting
    names falls to `install`, so every field of the part is in some digest."""
    named = {f for fields in _SPOKE_FIELDS.values() for f in fields} | {"name", "install"}
    settings = {s: {f: getattr(spoke, f) for f in fields} for s, fields in _SPOKE_FIELDS.items()}
    rest = {f.name: getattr(spoke, f.name) for f in dataclasses.fields(spoke)
            if f.name not in named}
    objects: dict[str, list[dict[str, Any]]] = {}
    install = spoke.install
    if install is not None:
        shape = _shape(install)
        settings["connection"]["install"] = {f: shape.pop(f) for f in _INSTALL_CONNECTION}
        rest["install"] = shape
        for component in install.components:
            for stage in component.stages:
                for obj in stage.objects:
                    objects.setdefault(object_key(obj), []).append(
                        {"object": obj, "stage": [component.component, stage.stage]})
    settings["install"] = rest
    return {"settings": {s: _brief(v) for s, v in settings.items()},
            # The same key twice (one name in two API groups) is digested as one list.
            "objects": {k: _brief(v[0] if len(v) == 1 else v)
                        for k, v in sorted(objects.items())}}


def plan_digest(plan: FleetPlan, stack: str, *, detail: bool = True) -> PlanDigest:
    """The digests of one run's plan of one stack; `detail=False` leaves out the
    per-object and per-setting digests (a check that only compares)."""
    parts = {FLEET: digest({"ring": plan.ring, "showsWaves": plan.shows_waves,
                            "membership": plan.membership, "waves": plan.waves,
                            "failure": plan.failure})}
    for name, spoke in plan.spokes.items():
        parts[f"spoke {name}"] = digest(spoke)
    details: dict[str, dict[str, dict[str, str]]] = {}
    if detail:
        details[FLEET] = _fleet_detail(plan)
        for name, spoke in plan.spokes.items():
            details[f"spoke {name}"] = _spoke_detail(spoke)
    return PlanDigest(stack, dict(sorted(parts.items())), dict(sorted(details.items())))


def _bare(stack: object) -> str:
    """`org/project/stack` or `stack` -> `stack`."""
    return str(stack).rsplit("/", 1)[-1]


def _recorded_detail(raw: object) -> dict[str, dict[str, dict[str, str]]]:
    """The detail a report recorded; what is not shaped as the program writes it is
    left out, so the refusal says the review has no detail for that part."""
    if not isinstance(raw, Mapping):
        return {}
    detail = {}
    for part, kinds in raw.items():
        if isinstance(kinds, Mapping) and all(isinstance(d, Mapping) for d in kinds.values()):
            detail[str(part)] = {str(kind): {str(k): str(v) for k, v in digests.items()}
                                 for kind, digests in kinds.items()}
    return detail


def reviewed_digest(report: Mapping[str, Any], stack: str) -> PlanDigest:
    """The plan a review report (report.json) recorded for `stack`."""
    plan = report.get("plan")
    if not isinstance(plan, Mapping) or not isinstance(plan.get("parts"), Mapping):
        raise NotReviewed("it records no plan: only a live review does "
                          "(python -m review --stack NAME, not --offline or --from-json)")
    named = {_bare(report.get("stack")), _bare(plan.get("stack"))}
    if named != {_bare(stack)}:
        raise NotReviewed(f"it is the review of stack {report.get('stack')!r}, not {stack!r}")
    return PlanDigest(stack, {str(k): str(v) for k, v in plan["parts"].items()},
                      _recorded_detail(plan.get("detail")))


def _changed(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str]]:
    """(how, key) for each key added, removed or changed, in the keys' order."""
    return [("added" if k not in old else "removed" if k not in new else "changed", k)
            for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]


def part_detail(part: str, reviewed: PlanDigest, fresh: PlanDigest,
                shown: int = SHOWN_OBJECTS) -> list[str]:
    """What moved in one part both plans have: its settings, then its objects (the
    first `shown`, then how many more)."""
    old, new = reviewed.detail.get(part), fresh.detail.get(part)
    if old is None:
        return ["the review predates per-object detail (its report.json records one "
                "digest for the part), so what differs cannot be named; review the "
                "stack again to see it"]
    if new is None:
        return []
    labels = FLEET_SETTINGS if part == FLEET else SPOKE_SETTINGS
    order = list(labels)
    settings = sorted(_changed(old.get("settings", {}), new.get("settings", {})),
                      key=lambda moved: order.index(moved[1]) if moved[1] in labels
                      else len(order))
    lines = [f"{how}: {labels.get(key, key)}" for how, key in settings]
    objects = _changed(old.get("objects", {}), new.get("objects", {}))
    lines += [f"{how} object: {key}" for how, key in objects[:shown]]
    if len(objects) > shown:
        lines.append(f"and {len(objects) - shown} more objects")
    if lines:
        return lines
    if part == FLEET:
        return ["no setting the review recorded differs (a review by another version of "
                "the program?)"]
    return ["the order of its objects within a stage (no object or setting the review "
            "recorded differs)"]


def differences(reviewed: PlanDigest, fresh: PlanDigest) -> list[str]:
    """Each part the fresh plan plans otherwise than the review, one line each, and
    under a part both plan, indented, what in it moved."""
    lines = []
    for part in sorted(reviewed.parts.keys() | fresh.parts.keys()):
        old, new = reviewed.parts.get(part), fresh.parts.get(part)
        if old == new:
            continue
        what = "the fleet's membership, waves or gates" if part == FLEET else part
        if old is None:
            lines.append(f"not reviewed: {what} (new in this run)")
        elif new is None:
            lines.append(f"reviewed, no longer planned: {what}")
        else:
            lines.append(f"planned otherwise than reviewed: {what}")
            lines += [f"  {line}" for line in part_detail(part, reviewed, fresh)]
    return lines


def refusal(report: Mapping[str, Any], fresh: PlanDigest, source: str) -> str | None:
    """Why this run must not register its plan under the review `source`, or None."""
    try:
        reviewed = reviewed_digest(report, fresh.stack)
    except NotReviewed as exc:
        return (f"the review {source} cannot be applied: {exc}. Nothing was registered "
                "or changed.")
    if reviewed.digest == fresh.digest:
        return None
    lines = "\n".join(f"  {line}" for line in differences(reviewed, fresh))
    return (f"stack {fresh.stack}: this run plans other changes than the review {source} "
            f"({fresh.digest[:19]}..., reviewed {reviewed.digest[:19]}...); nothing was "
            f"registered or changed:\n{lines}\nSomething changed after the review (the "
            "stack file, a ClusterProfile's labels, the release files, a spoke). Review "
            "the stack again (python -m review) and apply what that review shows.")
