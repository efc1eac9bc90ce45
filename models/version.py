"""spec.version: "x.y" (the newest patch known, releases.resolve_version) or "x.y.z":
that exact release, also one the built-in tables do not list when the release base has
it (releases.release_urls says how its ingress and sources are then chosen).
knative.version_step checks the step from what a spoke runs."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


def _version_shape(value: str) -> str:
    if not VERSION.match(value):
        raise ValueError(f'version must look like "1.23" or "1.23.0", got {value!r}')
    return value


Version = Annotated[str, AfterValidator(_version_shape)]
