"""`knative-fleet:rollout`: the order in which spokes change, in waves.

A spoke belongs to the first wave whose selector matches its ClusterProfile's
labels; a wave without a selector takes every spoke left and must be the last. A
wave starts only when every spoke of the wave before it is healthy (every
Deployment of the install Available) within that wave's `timeout`, and, for a wave
with `approval: Required`, only in a run a person approved (KNATIVE_FLEET_APPROVE).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from config.selector import LabelSelector
from core.strict import Strict, dns_label_name, repeated_names

# The provider's own wait for a Deployment (pulumi-kubernetes' default await timeout),
# so a stack that adds waves waits as long as it did before.
DEFAULT_WAVE_TIMEOUT = "10m"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def duration_seconds(text: str) -> int:
    """`1h`, `10m`, `90s`, `1m30s` -> seconds (Go's time.Duration text for whole seconds)."""
    match = _DURATION.match(text)
    if not text or not match:
        raise ValueError(f"a duration like '90s', '10m' or '1m30s', got {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError(f"a duration above zero, got {text!r}")
    return total


WaveName = dns_label_name("wave name")


class Wave(Strict):
    name: WaveName
    selector: LabelSelector | None = None
    timeout: str = DEFAULT_WAVE_TIMEOUT
    max_failures: Annotated[int, Field(ge=0)] = Field(0, alias="maxFailures")
    max_parallel: Annotated[int, Field(ge=1)] | None = Field(None, alias="maxParallel")
    # `Required`: the run stops before this wave unless KNATIVE_FLEET_APPROVE names it.
    approval: Literal["Required", "None"] = "None"

    @field_validator("timeout")
    @classmethod
    def valid_duration(cls, value: str) -> str:
        duration_seconds(value)
        return value

    @property
    def timeout_seconds(self) -> int:
        return duration_seconds(self.timeout)


class Rollout(Strict):
    waves: Annotated[list[Wave], Field(min_length=1)]

    @model_validator(mode="after")
    def ordered_waves(self) -> Rollout:
        problems = repeated_names((w.name for w in self.waves), "waves")
        for i, wave in enumerate(self.waves):
            if wave.selector is None and i != len(self.waves) - 1:
                problems.append(f"waves[{i}].selector: only the last wave may omit its "
                                "selector (it takes every spoke left); add a selector or "
                                "move the wave to the end")
        if problems:
            raise ValueError("; ".join(problems))
        return self
