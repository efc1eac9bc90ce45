"""spec.version and allowMinorSkip: the operator's IsVersionValidMigrationEligible
(pkg/reconciler/common/releases.go), with this product's allowMinorSkip to accept a
bigger step.

`version` is "x.y" (the newest patch known, releases.resolve_version) or "x.y.z": that
exact release, also one the built-in tables do not list when the release base has it
(releases.release_urls says how its ingress and sources are then chosen).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from core.errors import TransformError

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


def _version_shape(value: str) -> str:
    if not VERSION.match(value):
        raise ValueError(f'version must look like "1.23" or "1.23.0", got {value!r}')
    return value


Version = Annotated[str, AfterValidator(_version_shape)]


def check_version_step(component: str, installed: str | None, target: str,
                       allow_minor_skip: bool) -> None:
    """The operator's rule: upgrade or downgrade by at most one minor version at a time,
    so every release's migrations run in order. An entry may accept a bigger step."""
    if installed is None or allow_minor_skip:
        return
    have = tuple(int(p) for p in installed.split(".")[:2])
    want = tuple(int(p) for p in target.split(".")[:2])
    if have[0] != want[0] or abs(have[1] - want[1]) > 1:
        step = "upgrade" if want > have else "downgrade"
        raise TransformError(
            f"{component} runs {installed} on this spoke; {target} is a {step} across more "
            f"than one minor version, which Knative does not support. Move one minor version "
            f"per `pulumi up` (e.g. {have[0]}.{have[1] + (1 if want > have else -1)} first), "
            f"or set `{component}.allowMinorSkip: true` on this entry to accept the step")
