"""The fleet plan held against the last state, as a `pulumi preview --json` document:
the steps the engine would take, so the live review's summary reads it unchanged.

It walks the plan the way the registrar registers it (components/): the membership,
then wave by wave each spoke's component, its provider, the aggregated-role sweep and
guards, each component's stages (owned objects carrying the anchor's uid, an anchor
to be created giving an unknown one, as in a live preview), and the gates of gated
batches. Each resource's URN is the state's when the state has it (same type and name
under the spoke's component), else built as the engine builds it. Resources of the
state the plan does not register are deleted, unless the run would fail (then Pulumi
deletes nothing); a run that fails reports the same errors the program logs. The type
names and the inputs each dynamic provider compares are the registrar's own
(core.resource_types), and so is each dynamic resource's inputs: the same function
builds them for the registrar and here (fleet.crds_first, fleet.waves, lifecycle/).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.resource_types import (
    AGGREGATED_ROLE_GUARD,
    AGGREGATED_ROLE_SWEEP,
    APPROVAL_GATE,
    CLUSTER_RBAC,
    CRDS_FIRST,
    MEMBERSHIP,
    MEMBERSHIP_NAME,
    NAMESPACED_OBJECTS,
    PROVIDER_KEYS,
    PROVIDER_TYPE,
    SPOKE_OWNER_GUARD,
    SPOKE_TYPE,
    STACK_TYPE,
    WAVE_GATE,
    WEBHOOKS_FIRST,
    DynamicKind,
)
from fleet import crds_first, held_namespaced, held_rbac
from fleet import waves as planned_waves
from fleet.held_typed import state_needs_reading, typed_deleted_with_state, typed_key
from fleet.plan import ComponentInstall, FleetPlan, PlannedObject, Role, SpokeInstall, SpokePlan
from knative import manifests
from knative.plan import Stage
from lifecycle import aggregated_roles, membership, owner_guard, wave_gate, webhooks_first
from review.offline.diff import keys_step, object_step
from review.offline.state import HIDDEN, Hidden, LastState
from review.resources import urn_name, urn_type
from targeting.deselected import deselections

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's "known after apply"


def shown(value: Any) -> Any:
    """A value fit for the document: hidden secrets as "[secret]"."""
    if isinstance(value, Hidden):
        return "[secret]"
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


@dataclass
class _Walk:
    """The document being built: steps, the URNs the plan registers, diagnostics."""

    state: LastState
    prefix: str  # "urn:pulumi:<stack>::<project>::"
    stack_urn: str
    known_connection: bool  # the connection is built as the program builds it
    steps: list[dict[str, Any]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    # Per spoke, the typed resources of held objects the state holds and would delete
    # (fleet.held_typed.typed_key of each).
    typed_held: dict[str, frozenset[str]] = field(default_factory=dict)

    def urn(self, type_: str, name: str, parent: str | None) -> str:
        """The state's URN for (type, name) under parent, else the engine's."""
        if parent and parent != self.stack_urn:
            built = f"{self.prefix}{urn_type_chain(parent)}${type_}::{name}"
        else:
            built = f"{self.prefix}{type_}::{name}"
        if built in self.state.resources:
            return built
        for res in self.state.children(parent or self.stack_urn):
            if res.get("type") == type_ and urn_name(res["urn"]) == name:
                return str(res["urn"])
        return built

    def add(self, urn: str, type_: str, op: str, new_inputs: Mapping[str, Any] | None,
            parent: str | None, detailed: Mapping[str, Any] | None = None,
            custom: bool = True) -> str:
        self.seen.add(urn)
        old = self.state.resources.get(urn)
        step: dict[str, Any] = {"op": op, "urn": urn}
        if old is not None:
            step["oldState"] = {"urn": urn, "type": type_, "custom": custom,
                                "inputs": shown(old.get("inputs") or {}),
                                "outputs": shown(_identity(old.get("outputs") or {})),
                                "parent": old.get("parent")}
            if old.get("retainOnDelete"):
                step["oldState"]["retainOnDelete"] = True
        if new_inputs is not None and op != "delete":
            step["newState"] = {"urn": urn, "type": type_, "custom": custom,
                                "inputs": shown(dict(new_inputs)), "parent": parent}
        step["detailedDiff"] = dict(detailed) if detailed else None
        self.steps.append(step)
        return op


def urn_type_chain(urn: str) -> str:
    """The `parent$child` type part of a URN (what a child's type is appended to)."""
    parts = urn.split("::", 3)
    return parts[2] if len(parts) == 4 else urn_type(urn)


def _identity(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """An object's outputs reduced to its identity: the review reads no more of them."""
    meta = outputs.get("metadata")
    if not isinstance(meta, dict):
        return {k: v for k, v in outputs.items() if k != "__inputs"}
    return {"metadata": {k: meta[k] for k in ("name", "namespace", "uid") if k in meta}}


def _old_inputs(walk: _Walk, urn: str) -> dict[str, Any] | None:
    res = walk.state.resources.get(urn)
    return dict(res.get("inputs") or {}) if res is not None else None


def _object(walk: _Walk, spoke_urn: str, obj: PlannedObject, body: Mapping[str, Any],
            forced: str | None) -> tuple[str, str]:
    """One release object's step; `forced`: every object of the spoke is replaced (its
    provider is)."""
    urn = walk.urn(obj.type_token, obj.name, spoke_urn)
    op, effective, detailed = object_step(obj.type_token, _old_inputs(walk, urn), body,
                                          obj.ignore_changes or ())
    if forced and op in ("same", "update"):
        op = forced
    walk.add(urn, obj.type_token, op, effective, spoke_urn, detailed)
    return urn, op


def _anchor_uid(walk: _Walk, urn: str, op: str) -> str:
    """The anchor's uid as the owner reference takes it: the state's, unknown when the
    anchor is created or replaced."""
    if op in ("create", "replace"):
        return UNKNOWN
    outputs = (walk.state.resources.get(urn) or {}).get("outputs") or {}
    uid = (outputs.get("metadata") or {}).get("uid")
    return uid if isinstance(uid, str) else UNKNOWN


def _provider(walk: _Walk, spoke: SpokePlan, spoke_urn: str) -> str:
    install = spoke.install
    assert install is not None
    urn = walk.urn(PROVIDER_TYPE, spoke.name, spoke_urn)
    kubeconfig: Any = json.dumps(install.kubeconfig, sort_keys=True)
    old = _old_inputs(walk, urn)
    if old is not None and (isinstance(old.get("kubeconfig"), Hidden)
                            or not walk.known_connection):
        # Not readable in the export (or not built here): the server is compared instead.
        was = (walk.state.spokes_output.get(spoke.name) or {}).get("server")
        now = spoke.connection.server if spoke.connection else None
        kubeconfig = HIDDEN if was in (None, now) else f"server {now}"
        if kubeconfig is not HIDDEN:
            old = {**old, "kubeconfig": f"server {was}"}
    inputs = {"clusterIdentifier": install.identifier, "deleteUnreachable": "false",
              "enableConfigMapMutable": "true", "enableSecretMutable": "true",
              "enableServerSideApply": "true", "kubeconfig": kubeconfig}
    op, detailed = keys_step(PROVIDER_KEYS, old, inputs, replacing=("clusterIdentifier",))
    walk.add(urn, PROVIDER_TYPE, op, inputs, spoke_urn, detailed)
    return op


def _dynamic(walk: _Walk, kind: DynamicKind, name: str, parent: str | None,
             inputs: Mapping[str, Any]) -> str:
    """A dynamic resource's step, comparing the keys its provider's `diff` compares. Its
    detailedDiff is null, as the engine reports one (the review then diffs the whole
    inputs); the pickled provider is the state's."""
    urn = walk.urn(kind.type, name, parent)
    old = _old_inputs(walk, urn)
    op, _ = keys_step(kind.diff_keys, old, inputs)
    if old is not None and "__provider" in old:
        inputs = {"__provider": old["__provider"], **inputs}
    walk.add(urn, kind.type, op, inputs, parent or walk.stack_urn)
    return op


def _crds_first(walk: _Walk, component: ComponentInstall, spoke: str, spoke_urn: str,
                inputs: Mapping[str, Any]) -> str:
    """The CRDs-first step: an update also when its state records no digests of what it
    applied, or a refresh found drift (components.crds_first's diff)."""
    assert component.crds_first is not None
    urn = walk.urn(CRDS_FIRST.type, component.crds_first, spoke_urn)
    old = walk.state.resources.get(urn)
    outputs = (old or {}).get("outputs") or {}
    op = _dynamic(walk, CRDS_FIRST, component.crds_first, spoke_urn, inputs)
    if op == "same" and ("applied" not in outputs or outputs.get("drifted")):
        walk.steps[-1]["op"] = op = "update"
    return op


def _holding(walk: _Walk, kind: DynamicKind, name: str, spoke_urn: str,
             inputs: Mapping[str, Any]) -> str:
    """A cluster-RBAC or namespaced-objects step: an update also when a refresh found
    drift (components.dynamic_provider.HoldingProvider's diff)."""
    urn = walk.urn(kind.type, name, spoke_urn)
    old = walk.state.resources.get(urn)
    outputs = (old or {}).get("outputs") or {}
    op = _dynamic(walk, kind, name, spoke_urn, inputs)
    if op == "same" and outputs.get("drifted"):
        walk.steps[-1]["op"] = op = "update"
    return op


def _connection(walk: _Walk, install: SpokeInstall) -> Any:
    return install.connection if walk.known_connection else HIDDEN


def _spoke(walk: _Walk, spoke: SpokePlan) -> list[str]:
    """Every step of one reached spoke; returns their ops."""
    install = spoke.install
    assert install is not None
    spoke_urn = walk.urn(SPOKE_TYPE, spoke.name, None)
    ops = [walk.add(spoke_urn, SPOKE_TYPE, "same" if spoke_urn in walk.state.resources
                    else "create", {}, walk.stack_urn, custom=False)]
    provider_op = _provider(walk, spoke, spoke_urn)
    ops.append(provider_op)
    forced = "replace" if provider_op == "replace" else None
    connection = _connection(walk, install)
    timeout = install.plugin_timeout_s
    if install.sweep_name is not None:
        ops.append(_dynamic(walk, AGGREGATED_ROLE_SWEEP, install.sweep_name, spoke_urn,
                            aggregated_roles.sweep_inputs(install, spoke.name, connection)))
    for guard in install.guards:
        ops.append(_object(walk, spoke_urn, guard.role, guard.role.body, forced)[1])
        ops.append(_dynamic(walk, AGGREGATED_ROLE_GUARD, guard.name, spoke_urn,
                            aggregated_roles.guard_inputs(guard, spoke.name, connection,
                                                          timeout)))
    for component in install.components:
        uid = UNKNOWN
        anchor = _anchor_of(component)
        for stage in component.stages:
            if stage.stage is Stage.CRDS and component.crds_first is not None:
                ops.append(_crds_first(walk, component, spoke.name, spoke_urn,
                                       crds_first.step_inputs(component, spoke.name,
                                                              connection, timeout)))
                # Typed only while the state holds them so (fleet.held_typed).
                for obj in stage.objects:
                    if typed_key(obj.type_token, obj.name) in walk.typed_held.get(spoke.name, ()):
                        ops.append(_object(walk, spoke_urn, obj, obj.registered_body,
                                           forced)[1])
                continue
            if stage.stage is Stage.CLUSTER and component.cluster_rbac is not None:
                ops.append(_holding(walk, CLUSTER_RBAC, component.cluster_rbac, spoke_urn,
                                    held_rbac.step_inputs(component, spoke.name, connection,
                                                          timeout)))
            if stage.stage is Stage.NAMESPACED and component.namespaced_objects is not None:
                inputs = held_namespaced.step_inputs(
                    component, spoke.name, connection, timeout,
                    manifests.owner_reference(anchor, uid))
                if uid == UNKNOWN:  # the bodies need the anchor's uid: known after apply
                    inputs = {**inputs, "digest": UNKNOWN, "manifest": UNKNOWN}
                ops.append(_holding(walk, NAMESPACED_OBJECTS, component.namespaced_objects,
                                    spoke_urn, inputs))
            for obj in stage.objects:
                if obj.role is Role.AGGREGATED:
                    continue  # registered with its guard above
                if ((component.cluster_rbac is not None
                        and held_rbac.is_held(stage.stage, obj))
                        or (component.namespaced_objects is not None
                            and held_namespaced.is_held(stage.stage, obj))):
                    # Typed only while the state holds them so (fleet.held_typed).
                    if typed_key(obj.type_token, obj.name) in walk.typed_held.get(spoke.name, ()):
                        body = (manifests.with_owner(obj.registered_body,
                                                     manifests.owner_reference(anchor, uid))
                                if obj.owned else obj.registered_body)
                        ops.append(_object(walk, spoke_urn, obj, body, forced)[1])
                    continue
                body = obj.registered_body
                if obj.owned:
                    body = manifests.with_owner(obj.registered_body,
                                                manifests.owner_reference(anchor, uid))
                urn, op = _object(walk, spoke_urn, obj, body, forced)
                if obj.role is Role.ANCHOR:
                    uid = _anchor_uid(walk, urn, op)
                ops.append(op)
        if component.webhooks_first is not None:
            ops.append(_dynamic(walk, WEBHOOKS_FIRST, component.webhooks_first, spoke_urn,
                                webhooks_first.step_inputs(component, spoke.name, connection,
                                                           timeout)))
    owner = install.owner_guard
    if owner is not None:
        ops.append(_dynamic(walk, SPOKE_OWNER_GUARD, owner.name, spoke_urn,
                            owner_guard.guard_inputs(owner, spoke.name, spoke_urn, connection,
                                                     timeout)))
    return ops


def _anchor_of(component: ComponentInstall) -> str:
    return next(o.object_name for s in component.stages for o in s.objects
                if o.role is Role.ANCHOR)


# The gate's `changes` digests the batch's objects' uids and resourceVersions as the
# preview reports them: the provider's preview of a ConfigMap or Secret update keeps both
# (they are mutable in place here), of any other kind's update it does not, and a
# created or replaced object has no uid yet (as measured on the lab's previews).
_NEW_UID = frozenset({"create", "replace", "create-replacement"})
_SAME_IDENTITY = frozenset({"kubernetes:core/v1:ConfigMap", "kubernetes:core/v1:Secret"})


def _moves_gate(step: Mapping[str, Any]) -> bool:
    """Whether one step changes the digest a wave gate takes of its batch's objects."""
    type_ = urn_type(str(step.get("urn", "")))
    if not type_.startswith("kubernetes:"):
        return False
    op = step.get("op")
    return op in _NEW_UID or (op == "update" and type_ not in _SAME_IDENTITY)


def _approval(walk: _Walk, step: Any) -> None:
    """The approval gate in front of a wave (components.approval_gate): its digest is the
    plan's own, so it changes exactly as the live run's does."""
    _dynamic(walk, APPROVAL_GATE, step.approval.gate, None,
             planned_waves.approval_inputs(step))


def _gate(walk: _Walk, plan: FleetPlan, step: Any, batch: Any, changed: bool) -> None:
    """The batch's wave gate: its `changes` is unknown when the batch changes (the live
    preview's digest of objects not yet applied), else the state's."""
    installs = {name: plan.spokes[name].install for name in batch.spokes}
    old = _old_inputs(walk, walk.urn(WAVE_GATE.type, batch.gate, None))
    inputs = wave_gate.gate_inputs(step, batch, installs,
                                   UNKNOWN if changed or old is None else old.get("changes"))
    if not walk.known_connection:
        inputs["spokes"] = HIDDEN
    _dynamic(walk, WAVE_GATE, batch.gate, None, inputs)


def _membership(walk: _Walk, plan: FleetPlan) -> bool:
    """The membership's step; False when its check fails (a group would uninstall a
    spoke it no longer selects): then the run stops there, as the live one does."""
    record = plan.membership
    urn = walk.urn(MEMBERSHIP.type, MEMBERSHIP_NAME, None)
    old = _old_inputs(walk, urn)
    refused = [d for d in deselections(old or {}, record) if not d.uninstall]
    if refused:
        for d in refused:
            walk.diagnostics.append({"severity": "error", "urn": urn,
                                     "message": f"error: {d.message()}"})
        return False
    _dynamic(walk, MEMBERSHIP, MEMBERSHIP_NAME, None, membership.membership_inputs(record))
    return True


def stack_urn_of(state: LastState, project: str, stack: str) -> str:
    return state.stack_urn or f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


def _start(state: LastState, project: str, stack: str, known_connection: bool) -> _Walk:
    stack_urn = stack_urn_of(state, project, stack)
    parts = stack_urn.split("::")
    prefix = f"{parts[0]}::{parts[1]}::"
    walk = _Walk(state, prefix, stack_urn, known_connection)
    old = state.stack_resource
    if state_needs_reading((old or {}).get("outputs") or {}):
        walk.typed_held = typed_deleted_with_state(
            {"deployment": {"resources": list(state.resources.values())}})
    step: dict[str, Any] = {"op": "same" if old else "create", "urn": stack_urn,
                            "newState": {"urn": stack_urn, "type": STACK_TYPE,
                                         "custom": False}}
    if old:
        step["oldState"] = {"urn": stack_urn, "type": STACK_TYPE, "custom": False,
                            "outputs": shown(old.get("outputs") or {})}
    walk.steps.append(step)
    walk.seen.add(stack_urn)
    return walk


def _document(walk: _Walk) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for step in walk.steps:
        counts[step["op"]] = counts.get(step["op"], 0) + 1
    return {"steps": walk.steps, "diagnostics": walk.diagnostics, "changeSummary": counts}


def failed_document(state: LastState, project: str, stack: str, message: str) -> dict[str, Any]:
    """The program stopped before registering anything (config or selection error)."""
    walk = _start(state, project, stack, True)
    walk.diagnostics.append({"severity": "error", "message": f"error: {message}"})
    return _document(walk)


def preview_document(plan: FleetPlan, state: LastState, project: str, stack: str,
                     known_connection: bool = True) -> dict[str, Any]:
    """The steps of `pulumi preview` for this plan and state (see the module docstring).
    `known_connection`: the access-provider file was read, so connections and
    kubeconfigs are built as the program builds them (else only servers compare)."""
    walk = _start(state, project, stack, known_connection)
    if not _membership(walk, plan):
        return _document(walk)
    for step in plan.waves:
        if step.started and step.approval is not None:
            _approval(walk, step)
        for batch in step.batches:
            changed = False
            for name in batch.spokes:
                spoke = plan.spokes[name]
                if spoke.install is None:
                    continue
                start = len(walk.steps)
                _spoke(walk, spoke)
                changed |= any(_moves_gate(st) for st in walk.steps[start:])
                if plan.shows_waves:
                    walk.diagnostics.append({
                        "severity": "info", "urn": walk.urn(SPOKE_TYPE, name, None),
                        "message": f"wave {step.name!r} ({step.index + 1} of the rollout)"})
            if step.gated and batch.spokes:
                _gate(walk, plan, step, batch, changed)
    for err in plan.errors:
        walk.diagnostics.append({"severity": "error", "message": f"error: {err}"})
    if plan.failure is not None:
        walk.diagnostics.append({"severity": "error", "message": f"error: {plan.failure}"})
        return _document(walk)
    for urn, res in walk.state.resources.items():
        type_ = str(res.get("type", ""))
        if urn in walk.seen or type_ == STACK_TYPE or (
                type_.startswith("pulumi:providers:") and urn_name(urn).startswith("default")):
            continue
        walk.add(urn, type_, "delete", None, res.get("parent"), custom=bool(res.get("custom")))
    return _document(walk)
