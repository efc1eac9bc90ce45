"""How the program's Python runs, set in one call: the collector's thresholds
(sdk_speedups/collector.py) and every SDK speed-up the registry declares (sdk_speedups/), in
the order the program needs them. The program (`__main__.py`) and the benchmarks that
time it under mocks run the same way. Each part keeps Python's or the SDK's own
behaviour when its setting asks for it (docs/settings.md), and a speed-up whose SDK
is not the reviewed one says so on stderr (docs/sdk-speedups.md)."""

from __future__ import annotations

from collections.abc import Mapping

from core.settings import settings
from sdk_speedups.collector import GC_ENV, KEEP_PYTHON, use_program_gc
from sdk_speedups.registry import Installed, Report, install_all


def use_program_runtime(environ: Mapping[str, str] | None = None) -> Report:
    """Sets the collector and installs the SDK speed-ups; returns what is in place and
    why not, one line per part when printed."""
    config = settings(environ)
    gc = (Installed("gc", True) if use_program_gc(environ)
          else Installed("gc", False, f"{GC_ENV}={KEEP_PYTHON}"))
    return Report((gc, *install_all(config)))
