"""The program's own CPU profile, on request: with `KNATIVE_FLEET_PROFILE=FILE` set,
`pulumi preview` or `pulumi up` writes a cProfile of the Python program to FILE when
it ends (read it with `python -m pstats FILE`). It covers the program's main thread:
planning, rendering, and the Pulumi SDK registering and serializing every resource;
the gRPC calls themselves wait in the SDK's worker threads. Off unless asked."""

from __future__ import annotations

import atexit
import cProfile
from collections.abc import Mapping

from core.settings import settings

PROFILE_ENV = "KNATIVE_FLEET_PROFILE"


def profile_if_asked(environ: Mapping[str, str] | None = None) -> cProfile.Profile | None:
    """Starts the profile when `KNATIVE_FLEET_PROFILE` names a file; it is written as
    the language host's process exits (after every registration has completed)."""
    path = settings(environ).profile
    if path is None:
        return None
    profiler = cProfile.Profile()
    atexit.register(_write, profiler, str(path))
    profiler.enable()
    return profiler


def _write(profiler: cProfile.Profile, path: str) -> None:
    profiler.disable()
    profiler.dump_stats(path)
