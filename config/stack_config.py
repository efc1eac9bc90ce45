"""The stack's `knative-fleet:*` config as plain data, read key by key from the fleet
config model itself, so the keys are listed once (config.fleet.FleetConfig)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from config.fleet import CONFIG_NAMESPACE, FleetConfig


def stack_config_keys() -> dict[str, bool]:
    """{config key: whether its value is structured (JSON) rather than text}."""
    return {(f.alias or name): f.annotation not in (str, str | None)
            for name, f in FleetConfig.model_fields.items()}


def read_stack_config(get: Callable[[str], str | None]) -> dict[str, Any]:
    """Every key the stack sets, structured values parsed; types are checked by the
    fleet config model (a value that is not JSON is left as text, and validation reports
    the wrong type with its path)."""
    raw: dict[str, Any] = {}
    for key, structured in stack_config_keys().items():
        value = get(key)
        if value is None:
            continue
        if structured:
            try:
                value = json.loads(value)
            except ValueError:
                pass
        raw[key] = value
    return raw


def stack_file_values(path: Path) -> dict[str, Any]:
    """{key: value} of a stack file's `config:` (or of a file holding the keys alone)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return doc.get("config", doc)


def values_getter(values: dict[str, Any]) -> Callable[[str], str | None]:
    """A `get(key)` over `knative-fleet:*` values read without Pulumi, answering as
    `pulumi.Config.get` does: structured values as JSON text; a `secure` value as
    absent (no key the fleet reads is a secret)."""
    def get(key: str) -> str | None:
        value = values.get(f"{CONFIG_NAMESPACE}:{key}")
        if value is None or isinstance(value, dict) and "secure" in value:
            return None
        return value if isinstance(value, str) else json.dumps(value)
    return get
