"""Moving one spoke from stack A to stack B without deleting or re-creating an object.

A spoke has one owner (the record on its anchors, ownership.records). To move it, A
must forget it and the record must name B; then B's next `pulumi up` adopts every
object in place (server-side apply onto the existing objects keeps their uids), and
A's next `up` and `destroy` never touch it.

The order is the safety: A's state first (exported, a backup kept, the spoke's
component with everything under it and every reference to it dropped, imported
again), the record second. A failure in between leaves a spoke no stack's state holds,
which no destroy can delete; running the command again finishes the move.

The state filters below are pure functions over the exported state; `hand_over` does
the CLI calls and the spoke's write.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import Refused
from core.names import OWNER_ID_ANNOTATION
from core.resource_types import MEMBERSHIP, SPOKE_TYPE
from ownership.hold import Holder, RunHolds
from ownership.identity import OWNER_ID_OUTPUT, StackIdentity, owner_name
from ownership.records import Record, annotations_of, is_mine, others, records_from
from ownership.refusals import hand_over_refusal

if TYPE_CHECKING:
    from config.fleet import FleetConfig

PROFILE_IDENTIFIER_PREFIX = "clusterprofile/"
FIELD_MANAGER = "knative-fleet-hand-over"


class HandOverRefused(Refused):
    """The move cannot be made safely; `str()` names the spoke, the reason and the fix."""


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _resources(export: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list((export.get("deployment") or {}).get("resources") or [])


def spoke_urns(resources: Iterable[Mapping[str, Any]], spoke: str) -> set[str]:
    """The URN of the spoke's Spoke component and of every resource under it (its
    provider, its objects, its guards), at any depth."""
    resources = list(resources)
    dropped = {r["urn"] for r in resources
               if r.get("type") == SPOKE_TYPE and urn_name(r["urn"]) == spoke}
    grew = bool(dropped)
    while grew:
        more = {r["urn"] for r in resources if r.get("parent") in dropped} - dropped
        dropped |= more
        grew = bool(more)
    return dropped


def _provider_urn(reference: str) -> str:
    """A resource's `provider` field is "<provider urn>::<provider id>"."""
    return reference.rsplit("::", 1)[0]


def _without_references(resource: dict[str, Any], dropped: set[str]) -> dict[str, Any]:
    out = dict(resource)
    if out.get("dependencies"):
        out["dependencies"] = [u for u in out["dependencies"] if u not in dropped]
    if out.get("propertyDependencies"):
        out["propertyDependencies"] = {
            key: [u for u in urns if u not in dropped]
            for key, urns in out["propertyDependencies"].items()}
    if out.get("deletedWith") in dropped:
        del out["deletedWith"]
    return out


def _without_member(resource: dict[str, Any], spoke: str) -> dict[str, Any]:
    """The fleet membership record without the spoke, so A's next run does not count
    it as a spoke its group dropped (targeting.deselected)."""
    out = dict(resource)
    for key in ("inputs", "outputs"):
        record = out.get(key)
        if isinstance(record, dict) and spoke in (record.get("spokes") or {}):
            out[key] = {**record, "spokes": {
                k: v for k, v in record["spokes"].items() if k != spoke}}
    return out


def without_spoke(export: Mapping[str, Any], spoke: str) -> tuple[dict[str, Any], set[str]]:
    """The exported state with the spoke forgotten, and the URNs dropped: the Spoke
    component and its descendants go; every dependency, property dependency and
    deletedWith naming one of them, pending operations on them, and the spoke's entry
    in the fleet membership record go with them. Everything else is kept as it is."""
    resources = _resources(export)
    dropped = spoke_urns(resources, spoke)
    kept = []
    for resource in resources:
        if resource["urn"] in dropped:
            continue
        if resource.get("parent") in dropped or (
                resource.get("provider") and _provider_urn(resource["provider"]) in dropped):
            raise HandOverRefused(
                f"spoke {spoke!r}: {resource['urn']} is parented by or provisioned through "
                f"the spoke but not under its component; the state is not one this "
                f"program wrote, so nothing was changed")
        resource = _without_references(resource, dropped)
        if resource.get("type") == MEMBERSHIP.type:
            resource = _without_member(resource, spoke)
        kept.append(resource)
    deployment = dict(export.get("deployment") or {})
    deployment["resources"] = kept
    pending = deployment.get("pending_operations")
    if pending:
        deployment["pending_operations"] = [
            p for p in pending if (p.get("resource") or {}).get("urn") not in dropped]
    return {**export, "deployment": deployment}, dropped


def spoke_profile(export: Mapping[str, Any], spoke: str) -> tuple[str, str] | None:
    """(namespace, name) of the spoke's ClusterProfile as the state knows it: the
    membership record, else the cluster identifier of the spoke's provider."""
    resources = _resources(export)
    for resource in resources:
        if resource.get("type") == MEMBERSHIP.type:
            member = ((resource.get("inputs") or {}).get("spokes") or {}).get(spoke) or {}
            if "/" in str(member.get("profile", "")):
                namespace, name = member["profile"].split("/", 1)
                return namespace, name
    under = spoke_urns(resources, spoke)
    for resource in resources:
        if resource["urn"] in under and resource.get("type", "").startswith(
                "pulumi:providers:kubernetes"):
            identifier = str((resource.get("inputs") or {}).get("clusterIdentifier", ""))
            if identifier.startswith(PROFILE_IDENTIFIER_PREFIX):
                namespace, _, name = identifier[len(PROFILE_IDENTIFIER_PREFIX):].partition("/")
                return namespace, name
    return None


def record_refusal(spoke: str, records: Mapping[str, Record | None], source: StackIdentity,
                   target: StackIdentity, in_state: bool) -> str | None:
    """Why the spoke may not be handed over from `source`, or None. Each anchor's record
    must be `source`'s or nobody's (ownership.records); `target`'s is accepted only once
    the source's state no longer holds the spoke (a move being finished)."""
    foreign = {anchor: rec for anchor, rec in others(records, source).items()
               if in_state or not is_mine(rec, target)}
    if not foreign:
        return None
    return hand_over_refusal(spoke, foreign, source)


# ----- the CLI side ---------------------------------------------------------------------

def pulumi(*args: str, cwd: Path | None = None) -> str:
    """The Pulumi CLI's stdout, run in the project directory `cwd` (default: this one)."""
    proc = subprocess.run(["pulumi", *args, "--non-interactive"], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise HandOverRefused(f"pulumi {' '.join(args)} failed: "
                              f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def stack_identity(stack: str, backend: str, cwd: Path | None = None) -> StackIdentity:
    """A stack of this project as its record names it: the id its outputs keep (none
    for a stack that never ran: its first run adopts a record naming it), and its name."""
    full = pulumi("stack", "--stack", stack, "--show-name",
                  "--fully-qualify-stack-names", cwd=cwd).strip().splitlines()[-1]
    organization, project, name = full.split("/", 2)
    outputs = json.loads(pulumi("stack", "output", "--stack", stack, "--json", cwd=cwd) or "{}")
    saved = outputs.get(OWNER_ID_OUTPUT) if isinstance(outputs, dict) else None
    return StackIdentity(saved or "", owner_name(backend, organization, project, name),
                         saved=bool(saved))


def record_annotations(target: StackIdentity) -> dict[str, str | None]:
    """The record naming `target`: its id and name, or its name alone (the id removed)
    when it has none yet, so its first run adopts the install by name."""
    annotations: dict[str, str | None] = dict(annotations_of(target))
    if not target.saved:
        annotations[OWNER_ID_ANNOTATION] = None
    return annotations


@dataclass
class Moved:
    dropped: int
    backup: Path | None
    anchors: list[str]


def _private(path: Path, doc: Mapping[str, Any]) -> Path:
    """Writes a state file only its owner reads (its secrets are ciphertext already)."""
    path.touch(mode=0o600)
    path.write_text(json.dumps(doc, indent=1))
    return path


def hand_over(spoke: str, from_stack: str, to_stack: str, cfg: FleetConfig,
              backup_dir: Path, log: Callable[[str], None] = print,
              cwd: Path | None = None) -> Moved:
    """Moves `spoke` from `from_stack` (whose config `cfg` says how to reach the hub) to
    `to_stack`; raises HandOverRefused naming the spoke, the reason and the fix."""
    import uuid

    from kubernetes import client

    from access import ResolutionError
    from access.inventory import HubInventory
    from access.spoke_facts import spoke_api_client
    from fleet.spokes import INSTALL_NAMESPACES
    from ownership.identity import backend_url

    backend = backend_url(cwd=str(cwd) if cwd else None)
    source = stack_identity(from_stack, backend, cwd)
    target = stack_identity(to_stack, backend, cwd)
    if source.name == target.name:
        raise HandOverRefused(f"spoke {spoke!r}: --from-stack and --to-stack are one stack "
                              f"({source.name}); nothing was changed")
    if source.saved and source.id == target.id:
        raise HandOverRefused(
            f"spoke {spoke!r}: stacks {from_stack} and {to_stack} carry one owner id "
            f"({source.id}): one is a copy of the other's state, and both would own the "
            f"spoke; nothing was changed. Fix: give the copy an identity of its own (docs/"
            f"architecture.md, 'One owner per spoke': a copied state)")
    export = json.loads(pulumi("stack", "export", "--stack", from_stack, cwd=cwd))
    filtered, dropped = without_spoke(export, spoke)
    where = spoke_profile(export, spoke)
    if where is None:
        refs = [e.cluster_profile_ref for e in cfg.fleet if e.name == spoke]
        where = (refs[0].namespace, refs[0].name) if refs else None
    if where is None:
        raise HandOverRefused(
            f"spoke {spoke!r}: stack {from_stack!r} neither holds it in its state nor names "
            f"it in its config; nothing was changed. Fix: check --spoke and --from-stack")
    inventory = HubInventory.of(cfg)
    inventory.open()
    try:
        reached = inventory.reach(spoke, where[0], where[1], INSTALL_NAMESPACES)
    except ResolutionError as exc:
        raise HandOverRefused(f"{exc} (nothing was changed)") from None
    # The same hold a run takes: no `up` of either stack changes the spoke meanwhile.
    holds = RunHolds(Holder(f"hand-over/{uuid.uuid4().hex}",
                            f"a hand-over of spoke {spoke!r} from {from_stack} to {to_stack}"))
    records: dict[str, Record | None] = {}

    def movable(api: client.ApiClient) -> None:
        from access.spoke_facts import read_anchors

        records.update(records_from(read_anchors(api)))
        refusal = record_refusal(spoke, records, source, target, bool(dropped))
        if refusal:
            raise HandOverRefused(refusal)

    from ownership.errors import OwnershipError

    try:
        holds.take(spoke, lambda: spoke_api_client(reached.connection, reached.credential),
                   movable)
    except OwnershipError as exc:
        raise HandOverRefused(f"{exc}") from None
    try:
        backup: Path | None = None
        if dropped:
            backup_dir.mkdir(parents=True, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            base = f"{from_stack.replace('/', '_')}-{stamp}"
            backup = _private(backup_dir / f"{base}.json", export)
            new_state = _private(backup_dir / f"{base}-without-{spoke}.json", filtered)
            pulumi("stack", "import", "--stack", from_stack, "--file", str(new_state),
                   cwd=cwd)
            log(f"stack {from_stack}: forgot spoke {spoke!r} ({len(dropped)} resources; "
                f"the objects stay on the spoke); backup of the state before: {backup}")
        else:
            log(f"stack {from_stack}: its state holds nothing of spoke {spoke!r}")

        written = []
        with spoke_api_client(reached.connection, reached.credential) as api:
            core = client.CoreV1Api(api)
            for anchor, rec in sorted(records.items()):
                if rec is None or (rec.owner_name == target.name
                                   and (rec.owner_id or "") == (target.id if target.saved
                                                                else "")):
                    continue
                namespace, name = anchor.split("/", 1)
                core.patch_namespaced_config_map(
                    name, namespace, {"metadata": {"annotations": record_annotations(target)}},
                    field_manager=FIELD_MANAGER)
                written.append(anchor)
    finally:
        holds.release_all()
    log(f"spoke {spoke!r}: its owner record names {target.name} "
        + (f"now (written on {', '.join(written)})" if written else "(it did already)"))
    return Moved(len(dropped), backup, written)
