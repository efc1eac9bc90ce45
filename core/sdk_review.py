"""When knative-fleet may put its own version of a Python SDK function in place.

The program replaces or wraps a few SDK functions (`sdk_kept_outputs`,
`sdk_outputs_wait`, `sdk_plain_urn`, `sdk_plain_values`, `sdk_stack_trace`), each
written against one SDK release and checked to give that function's result. Each does
so only when the user has not asked for the SDK's own (`KNATIVE_FLEET_SDK_<NAME>=sdk`)
and the SDK function's source is the one it was checked against (its sha256); another
SDK version keeps its own functions, and each module's unit test fails until it is
checked again.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

KEEP_SDK = "sdk"


def source_sha256(function: Callable[..., Any]) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()


def may_replace(env_var: str, environ: Mapping[str, str] | None,
                sdk_function: Callable[..., Any], reviewed_sha256: str) -> bool:
    """True unless `env_var=sdk` or the SDK's function is not the one reviewed."""
    if (os.environ if environ is None else environ).get(env_var) == KEEP_SDK:
        return False
    return source_sha256(sdk_function) == reviewed_sha256
