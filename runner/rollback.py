"""Returning a failed stack to its last successful config.

The backend keeps, with every update in a stack's history, the config it ran with
(`pulumi stack history`). A stack whose newest update failed is rolled back by writing
the config of its newest successful update into its stack file and running `up` again:
the objects go back to what that update applied (those it did not change keep their
uids), and the stack file in the working copy says what runs now, for the fix to start
from. Only stacks that failed are rolled back; a ring that did not run is never touched.
Secret values are not written back in plaintext: a config that holds one is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from config.stack_config import stack_config_keys

NAMESPACE = "knative-fleet"


class RollbackRefused(Exception):  # noqa: N818 - what the stack's result says
    """The stack cannot be rolled back; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    version: int | None  # the update's number in the stack's history
    when: str  # its start time
    config: dict[str, Any]  # knative-fleet key (without namespace) -> value, structured parsed


def _entry(summary: Any) -> tuple[str, str, int | None, str, Mapping[str, Any]]:
    return (summary.kind, summary.result, summary.version, str(summary.start_time),
            summary.config or {})


def last_good(history: Sequence[Any]) -> tuple[bool, Target | None]:
    """(whether the newest update failed, the newest successful update's config).
    `history` is newest first (the Automation API's `Stack.history()`)."""
    updates = [_entry(s) for s in history if s.kind == "update"]
    if not updates:
        return False, None
    newest_failed = updates[0][1] != "succeeded"
    for _kind, result, version, when, config in updates:
        if result == "succeeded":
            return newest_failed, Target(version, when, _fleet_values(config, version))
    return newest_failed, None


def _fleet_values(config: Mapping[str, Any], version: int | None) -> dict[str, Any]:
    structured = stack_config_keys()
    values: dict[str, Any] = {}
    for full_key, item in config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE:
            continue
        if getattr(item, "secret", False):
            raise RollbackRefused(
                f"the config of update {version} holds the secret {full_key}; the runner "
                "does not write secrets back in plaintext: roll back by hand")
        value = getattr(item, "value", item)
        if structured.get(key) and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        values[key] = value
    return values


def stack_file(project_dir: Path, stack: str) -> Path:
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text()) or {}
    return project_dir / project.get("stackConfigDir", ".") / f"Pulumi.{stack}.yaml"


def changed_keys(current: Mapping[str, Any], target: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in set(current) | set(target) if current.get(k) != target.get(k))


def write_back(path: Path, target: Target) -> list[str]:
    """Writes the target's knative-fleet keys into the stack file, keeping every other
    key (other namespaces, the encryption salt); returns the keys that changed."""
    document = (yaml.safe_load(path.read_text()) if path.exists() else None) or {}
    config = dict(document.get("config") or {})
    current = {k.partition(":")[2]: v for k, v in config.items()
               if k.startswith(NAMESPACE + ":")}
    changed = changed_keys(current, target.config)
    config = {k: v for k, v in config.items() if not k.startswith(NAMESPACE + ":")}
    config.update({f"{NAMESPACE}:{k}": v for k, v in target.config.items()})
    document["config"] = config
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return changed
