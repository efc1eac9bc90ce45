"""What each stack of a fleet selects, read as its program would: the stack file's
`knative-fleet:*` keys through the program's config model, the hub's ClusterProfiles
through the inventory, and the same targeting code, read-only.

Each hub is listed once per inventory namespace for the whole fleet, however many
stacks share it. A stack whose selection cannot be read (its config is invalid, its
hub cannot be listed) cannot run either, so it installs nothing this run: it is left
out of the check with a note saying why, instead of blocking every other stack.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from access.inventory import HubInventory
from config.fleet import CONFIG_NAMESPACE, FleetConfig, parse_fleet_config
from config.stack_config import read_stack_config
from core.errors import ConfigError, ProfileError
from runner.overlap import StackSelection
from runner.selection import StackFile
from targeting.claims import claims
from targeting.referenced import referenced_profiles
from targeting.selection import Profile

# The keys that decide what a stack selects; a secret among them cannot be read here.
SELECTION_KEYS = ("hub", "fleet", "groups")


@dataclass
class FleetSelections:
    """Every readable stack's selection, and a note for each stack (or part of one)
    left out of the check."""

    selections: dict[str, StackSelection] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class _Hub:
    """One hub's inventory for the whole check: each namespace listed at most once."""

    def __init__(self, inventory: HubInventory, name: str) -> None:
        self.inventory = inventory
        self.name = name
        self._listed: dict[str, list[dict] | ProfileError] = {}

    def cluster_profiles(self, namespace: str) -> list[dict]:
        if namespace not in self._listed:
            try:
                self._listed[namespace] = self.inventory.cluster_profiles(namespace)
            except ProfileError as exc:
                self._listed[namespace] = exc
        found = self._listed[namespace]
        if isinstance(found, ProfileError):
            raise found
        return found


class _Hubs:
    def __init__(self, project_dir: Path) -> None:
        self.project_dir = project_dir
        self._hubs: dict[tuple[str | None, str | None], _Hub] = {}

    def of(self, cfg: FleetConfig) -> _Hub:
        """The stack's hub; a relative kubeconfig is taken from the project directory,
        where Pulumi runs the program."""
        path = cfg.hub.kubeconfig
        if path and not path.startswith("~") and not Path(path).is_absolute():
            path = str(self.project_dir / path)
        key = (path, cfg.hub.context)
        if key not in self._hubs:
            inventory = HubInventory(path, cfg.hub.context, None, cfg.plugin_timeout_seconds)
            name = (inventory.hub.configuration.host if inventory.hub is not None
                    else f"(kubeconfig {path or 'default'})")
            self._hubs[key] = _Hub(inventory, name)
        return self._hubs[key]


def config_values(path: Path) -> dict[str, Any]:
    """{key: value} of a stack file's `config:`."""
    doc = yaml.safe_load(path.read_text()) or {}
    values = doc.get("config") if isinstance(doc, dict) else None
    return values if isinstance(values, dict) else {}


def read_config(values: dict[str, Any]) -> FleetConfig:
    """The stack's fleet config as its program validates it; raises ConfigError."""
    secret = [k for k in SELECTION_KEYS
              if isinstance(values.get(f"{CONFIG_NAMESPACE}:{k}"), dict)
              and "secure" in values[f"{CONFIG_NAMESPACE}:{k}"]]
    if secret:
        raise ConfigError(f"{', '.join(f'{CONFIG_NAMESPACE}:{k}' for k in secret)} is a "
                          "secret, which the runner does not decrypt")

    def get(key: str) -> str | None:
        value = values.get(f"{CONFIG_NAMESPACE}:{key}")
        if value is None or isinstance(value, dict) and "secure" in value:
            return None
        return value if isinstance(value, str) else json.dumps(value)

    return parse_fleet_config(read_stack_config(get))


def _selection(cfg: FleetConfig, hubs: _Hubs, stack: str,
               notes: list[str]) -> StackSelection:
    if not cfg.fleet and not cfg.groups:
        return StackSelection("")
    hub = hubs.of(cfg)
    listed: list[Profile] = []
    namespaces = sorted({g.namespace for g in cfg.groups})
    for namespace in namespaces:
        try:
            listed += map(Profile.from_object, hub.cluster_profiles(namespace))
        except ProfileError as exc:
            notes.append(f"stack {stack}: its groups in namespace {namespace} are left out "
                         f"of the check: {exc.reason}: {exc.message} (the stack cannot "
                         "select them either, and fails when it runs)")
    profiles = listed + referenced_profiles(cfg, hub, namespaces)
    return StackSelection(hub.name, tuple(claims(cfg, profiles)))


def read_selections(project_dir: Path, stacks: list[StackFile]) -> FleetSelections:
    """What every stack selects, from its file and its hub."""
    out = FleetSelections()
    hubs = _Hubs(project_dir)
    for stack in stacks:
        try:
            cfg = read_config(config_values(stack.path))
        except FileNotFoundError:
            continue  # removed since it was listed: it runs no more than it selects
        except (ConfigError, ValueError, yaml.YAMLError) as exc:
            first = str(exc).strip().splitlines()
            out.notes.append(f"stack {stack.name} is left out of the check: its config "
                             f"cannot be read: {' '.join(first[:2])} (it fails when it runs)")
            continue
        out.selections[stack.name] = _selection(cfg, hubs, stack.name, out.notes)
    return out
