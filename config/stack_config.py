"""The stack's `knative-fleet:*` config as plain data, read key by key from the fleet
config model itself, so the keys are listed once (config.fleet.FleetConfig)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from config.fleet import FleetConfig


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
