"""Returning a failed stack to its last successful config, and keeping it there.

The backend keeps, with every update in a stack's history, the config it ran with
(`pulumi stack history`). A stack whose newest update failed is rolled back by writing
the config of its newest successful update into its stack file and running `up` again:
the objects go back to what that update applied (those it did not change keep their
uids), and the stack file in the working copy says what runs now, for the fix to start
from. Only stacks whose update failed are rolled back: a stack that stopped before a
wave waiting for approval did not fail, and a ring that did not run is never touched.

Knative does not support downgrades, and the failed update may have upgraded spokes
already: every Knative version stays the one the failed config set, and everything
else goes back (a failed 1.22 -> 1.23 upgrade whose canary never got healthy keeps 1.23
with the rest of the last good config). Refused, with the reason and the way on: a
config that holds a secret (it is not written back in plaintext), and a stack with no
successful update to return to.

The rollback's update carries the failed config's digest in its message, so the
backend remembers it: `up` refuses that same config again until it changes or a
person asks for it (`--retry-rolled-back`), because the repository still holds it
and the next push would apply it again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from config.stack_config import read_stack_config, stack_file_values, values_getter
from core.errors import Refused

NAMESPACE = "knative-fleet"
COMPONENTS = ("serving", "eventing")
MARK = "knative-fleet rollback of config"
_MARKED = re.compile(re.escape(MARK) + r" (sha256:[0-9a-f]{64})")


class RollbackRefused(Refused):  # noqa: N818 - what the stack's result says
    """The stack cannot be rolled back; the message says why and what to do."""


@dataclass(frozen=True)
class Entry:
    """One update of a stack's history, as plain data."""

    kind: str
    result: str
    version: int | None  # 0 or None on a self-managed backend, which numbers none
    started: datetime | None  # UTC
    message: str
    config: Mapping[str, Any]  # full key -> ConfigValue (value, secret)

    @property
    def label(self) -> str:
        """The update as `pulumi stack history` shows it: its version where the backend
        numbers updates, and its start time."""
        when = f"{self.started:%Y-%m-%d %H:%M:%S} UTC" if self.started else "an unknown time"
        if self.version:
            return f"update {self.version} (started {when})"
        return f"the update started {when}"

    @property
    def values(self) -> dict[str, Any]:
        """Its knative-fleet keys, parsed as the program parses them (secrets absent)."""
        def get(key: str) -> str | None:
            item = self.config.get(f"{NAMESPACE}:{key}")
            if item is None or getattr(item, "secret", False):
                return None
            value = getattr(item, "value", item)
            return value if isinstance(value, str) else json.dumps(value)
        return read_stack_config(get)

    @property
    def secrets(self) -> list[str]:
        return sorted(k for k, v in self.config.items()
                      if k.startswith(NAMESPACE + ":") and getattr(v, "secret", False))

    @property
    def digest(self) -> str:
        return config_digest(self.values)

    @property
    def rolled_back(self) -> str | None:
        """The digest of the config this update rolled back, if it is a rollback."""
        found = _MARKED.search(self.message or "")
        return found[1] if found else None


def entries(history: Iterable[Any]) -> list[Entry]:
    """The updates of an Automation API history (newest first), other kinds left out."""
    return [Entry(s.kind, s.result, s.version, s.start_time, s.message or "",
                  s.config or {}) for s in history if s.kind == "update"]


def config_digest(values: Mapping[str, Any]) -> str:
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def file_values(path: Path) -> dict[str, Any]:
    """A stack file's knative-fleet keys, parsed as the program parses them."""
    return read_stack_config(values_getter(stack_file_values(path))) if path.exists() else {}


@dataclass(frozen=True)
class Target:
    version: int | None  # the update's number in the stack's history
    when: str  # its start time
    config: dict[str, Any]  # knative-fleet key (without namespace) -> value, structured parsed
    label: str = ""


@dataclass(frozen=True)
class RollbackPlan:
    """What a rollback does: the failed update, and the update whose config returns."""

    failed: Entry
    target: Target
    kept: tuple[str, ...] = ()  # the Knative versions kept from the failed config

    @property
    def summary(self) -> str:
        """What the rollback does, in words."""
        text = f"back to the config of {self.target.label}"
        if self.kept:
            text += (f", keeping {'; '.join(self.kept)}: Knative does not support "
                     "downgrades")
        return text

    @property
    def message(self) -> str:
        """The rollback update's message: the backend keeps the failed config's digest."""
        return (f"{MARK} {self.failed.digest}: the config of {self.failed.label} failed; "
                f"{self.summary}")


def _versions(values: Mapping[str, Any]) -> dict[tuple[str, int, str], str]:
    """(key, index, component) -> version, for every fleet entry and group that sets one."""
    out = {}
    for key in ("fleet", "groups"):
        for i, item in enumerate(values.get(key) or []):
            if not isinstance(item, Mapping):
                continue
            for component in COMPONENTS:
                spec = item.get(component)
                if isinstance(spec, Mapping) and spec.get("version") is not None:
                    out[(key, i, component)] = str(spec["version"])
    return out


def _by_name(values: Mapping[str, Any]) -> dict[tuple[str, str, str], tuple[int, str]]:
    return {(key, str(values[key][i].get("name")), component): (i, version)
            for (key, i, component), version in _versions(values).items()}


_KIND = {"fleet": "fleet entry", "groups": "group"}


def keep_versions(failed: Mapping[str, Any], target: Mapping[str, Any]
                  ) -> tuple[dict[str, Any], list[str]]:
    """The target config with every Knative version the failed config set for the same
    fleet entry or group (by name), and a line for each version kept: Knative does not
    support downgrades, and the failed update may have upgraded spokes already."""
    old, new = _by_name(failed), _by_name(target)
    values = json.loads(json.dumps(dict(target)))
    kept = []
    for k in sorted(old.keys() & new.keys()):
        if old[k][1] == new[k][1]:
            continue
        key, name, component = k
        values[key][new[k][0]][component]["version"] = old[k][1]
        kept.append(f"{component.capitalize()} {old[k][1]} of {_KIND[key]} {name!r} "
                    f"(it was {new[k][1]})")
    return values, kept


def plan_rollback(history: Sequence[Entry]) -> RollbackPlan | str:
    """The rollback of a stack whose newest update failed, or why there is nothing to
    roll back (a text); RollbackRefused when it must not be rolled back. The Knative
    versions stay those of the failed config (keep_versions)."""
    if not history:
        return "no update in its history: nothing to roll back"
    failed = history[0]
    if failed.result == "succeeded":
        return "its newest update succeeded: nothing to roll back"
    good = next((e for e in history if e.result == "succeeded"), None)
    if good is None:
        raise RollbackRefused("no successful update in its history to return to; fix its "
                              "config and run up, or destroy it")
    if good.secrets:
        raise RollbackRefused(
            f"the config of {good.label} holds the secret {', '.join(good.secrets)}; the "
            "runner does not write secrets back in plaintext: roll back by hand")
    values, kept = keep_versions(failed.values, good.values)
    when = f"{good.started:%Y-%m-%d %H:%M:%S} UTC" if good.started else ""
    return RollbackPlan(failed, Target(good.version, when, values, good.label), tuple(kept))


def retry_refusal(history: Sequence[Entry], values: Mapping[str, Any]) -> str | None:
    """Why `up` must not apply this config again: it failed and was rolled back, and no
    update ran it successfully since. None when it may run."""
    digest = config_digest(values)
    for entry in history:  # newest first
        if entry.result == "succeeded" and entry.digest == digest:
            return None
        if entry.rolled_back == digest:
            return (f"refused: this config ({digest[:19]}...) failed and was rolled back "
                    f"by {entry.label}; the stack runs the config that rollback returned "
                    "to. Change the config (fix what failed), or run again with "
                    "--retry-rolled-back to apply it once more as it is")
    return None


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
