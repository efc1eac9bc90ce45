"""The offline review: what `make review` reports, from files only.

From the stack's config file (parsed as the program parses its config), a ClusterProfile
snapshot (profiles.py) and the stack's last state (`pulumi stack export`, state.py), the
planner renders every spoke through an inventory that contacts nothing (inventory.py);
the plan held against the state (diff.py) becomes a `pulumi preview --json` document
(preview.py), and the live review's summary, Markdown and JSON writers report it. What
only the hub and the spokes can say is listed in the report as not known.

A package of its own so that the live review loads none of it: it runs the planner.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from config.fleet import parse_fleet_config
from config.stack_config import read_stack_config, stack_file_values, values_getter
from core.errors import ConfigError
from core.resource_types import STACK_TYPE
from fleet import plan_fleet
from fleet.plan import FleetPlan
from ownership.identity import (
    BACKEND_ENV,
    OWNER_ID_OUTPUT,
    StackIdentity,
    new_id,
    owner_name,
)
from ownership.records import as_recorded, record_of
from review.markdown import LIMIT, render
from review.offline.inventory import UNKNOWN_VERSION, OfflineInventory
from review.offline.preview import failed_document, preview_document
from review.offline.profiles import ProfileSnapshot
from review.offline.state import LastState
from review.preview import failed
from review.summary import Summary, summarise

REPO = Path(__file__).resolve().parents[2]
# Organization of a stack on a self-managed backend (file, s3, gs, azblob).
DIY_ORGANIZATION = "organization"


@dataclass(frozen=True)
class Unknown:
    key: str
    text: str


@dataclass
class OfflineReview:
    summary: Summary
    document: dict[str, Any]
    unknown: list[Unknown] = field(default_factory=list)
    profiles_taken_at: str | None = None
    state_taken_at: str | None = None

    def offline_json(self) -> dict[str, Any]:
        return {"profilesTakenAt": self.profiles_taken_at,
                "stateTakenAt": self.state_taken_at,
                "cannotKnow": [{"key": u.key, "text": u.text} for u in self.unknown]}


def stack_file(stack: str, given: Path | None = None, root: Path = REPO) -> Path:
    """The stack's config file: the one given, else stacks/Pulumi.<stack>.yaml."""
    return given or root / "stacks" / f"Pulumi.{stack}.yaml"


def config_getter(path: Path) -> Any:
    """A `get(key)` over a stack file's `knative-fleet:*` values, as `pulumi.Config.get`
    answers."""
    return values_getter(stack_file_values(path))


def project_name(root: Path = REPO) -> str:
    doc = yaml.safe_load((root / "Pulumi.yaml").read_text()) or {}
    return str(doc.get("name") or "knative-fleet")


def stack_owner(state: LastState, project: str, stack: str,
                env: Mapping[str, str] | None = None) -> StackIdentity | None:
    """This stack's identity as the program reads it: the id the state keeps (its
    `ownerId` output, else the anchors' record) and the name its records carry while
    their id is that one (ownership.records `as_recorded`); without a record, the name
    from PULUMI_BACKEND_URL (a self-managed backend's organization); None when neither
    is known."""
    env = os.environ if env is None else env
    saved: str | None = None
    records = []
    for res in state.resources.values():
        if res.get("type") == STACK_TYPE:
            saved = (res.get("outputs") or {}).get(OWNER_ID_OUTPUT) or saved
        annotations = (((res.get("inputs") or {}).get("metadata") or {})
                       .get("annotations") or {})
        record = record_of(annotations) if isinstance(annotations, dict) else None
        if record is not None:
            records.append(record)
    saved = saved or next((r.owner_id for r in records if r.owner_id), None)
    url = env.get(BACKEND_ENV)
    current = (owner_name(url, DIY_ORGANIZATION, project, stack)
               if url and not url.startswith(("https://", "http://")) else None)
    name = current or next((r.owner_name for r in records if r.owner_name), None)
    if name is None:
        return None
    me = StackIdentity(saved, name) if saved else StackIdentity(new_id(), name, saved=False)
    return as_recorded(me, {str(i): r for i, r in enumerate(records)})


def unknowns(plan: FleetPlan | None, state: LastState, inventory: OfflineInventory
             ) -> list[Unknown]:
    """What this review cannot know, most important first."""
    out = [
        Unknown("drift", "live drift: changes made on the spokes since the last run (a "
                "live preview compares with the live objects; `make drift` finds them)"),
        Unknown("reachability", "whether each spoke and the hub are reachable now and the "
                "access provider issues credentials (no exec plugin was run)"),
        Unknown("rights", "whether each spoke's identity holds the rights this install "
                "needs (SpokeAccessDenied)"),
        Unknown("ownerRecords", "the owner records on the spokes' anchors: whether another "
                "stack manages a spoke (SpokeOwnedByAnotherStack), or an anchor is being "
                "deleted (AnchorBeingDeleted)"),
        Unknown("operatorCRs", "KnativeServing or KnativeEventing CRs of the Knative "
                "Operator on the spokes (KnativeOperatorActive)"),
        Unknown("serverDefaults", "the API server's defaults, admission and "
                "pulumi-kubernetes' own normalisation: a field the server defaults may show "
                "here as a change a live preview does not show, or the reverse"),
    ]
    if plan is not None:
        new = [n for n, s in plan.spokes.items()
               if s.install is not None and not state.spoke_objects(n)]
        if new:
            out.append(Unknown("newSpokes", f"what already runs on the new spoke(s) "
                               f"{', '.join(new)}: assumed a cluster without Knative (no "
                               "install namespace, no installed version)"))
        versions = [n for n, s in plan.spokes.items() if s.server_version == UNKNOWN_VERSION]
        if versions:
            out.append(Unknown("serverVersion", "the Kubernetes version of "
                               f"{', '.join(versions)} (not in the state)"))
    if state.hidden_secrets:
        out.append(Unknown("secrets", "secret inputs (provider kubeconfigs, connections) are "
                           "ciphertext in the export: providers are compared by server "
                           "only (`pulumi stack export --show-secrets` compares them whole)"))
    if inventory.provider_file_problem:
        out.append(Unknown("providerFile", "the access-provider file is not readable here "
                           f"({inventory.provider_file_problem}): connections are compared "
                           "by server only"))
    return out


def review_offline(stack: str, config_file: Path, profiles: Path, state_file: Path,
                   owner: StackIdentity | None = None, root: Path = REPO) -> OfflineReview:
    """The review of the stack's config against its last state; reads files only."""
    state = LastState.load(state_file)
    snapshot = ProfileSnapshot.load(profiles)
    project = project_name(root)
    owner = owner or stack_owner(state, project, stack)
    plan: FleetPlan | None = None
    inventory = OfflineInventory(snapshot, state, None)
    try:
        cfg = parse_fleet_config(read_stack_config(config_getter(config_file)))
        inventory = OfflineInventory(snapshot, state, cfg.provider_file)
        plan = plan_fleet(cfg, inventory, owner=owner)
        document = preview_document(plan, state, project, stack,
                                    known_connection=inventory.providers is not None)
    except ConfigError as exc:
        document = failed_document(state, project, stack, str(exc))
    code = 1 if failed(document) else 0
    return OfflineReview(summarise(document, code, stack), document,
                         unknowns(plan, state, inventory), snapshot.taken_at, state.taken_at)


def markdown(review: OfflineReview, limit: int = LIMIT) -> str:
    """The live review's comment, marked offline, with what it cannot know at the end."""
    when = (f"ClusterProfiles of {review.profiles_taken_at or 'an unknown time'}, state of "
            f"{review.state_taken_at or 'an unknown time'}")
    note = (f"_Offline review ({when}): rendered from the config and files only; nothing "
            "was read from the hub or a spoke._")
    tail = ["", "### Not known offline", "", *(f"- {u.text}" for u in review.unknown), ""]
    room = limit - len(note) - len("\n".join(tail)) - 4
    head, _, rest = render(review.summary, room).partition("\n")
    return "\n".join([head, "", note, rest.lstrip("\n")]).rstrip() + "\n" + "\n".join(tail)
