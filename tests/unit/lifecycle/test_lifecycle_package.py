"""lifecycle/ is free of Pulumi: its steps run with plain resource properties, so a test
(or another tool) runs them without an engine."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import lifecycle
from lab.paths import REPO


def test_no_module_of_lifecycle_loads_pulumi() -> None:
    modules = [f"lifecycle.{m.name}" for m in pkgutil.iter_modules(lifecycle.__path__)]
    assert {"lifecycle.wave_gate", "lifecycle.aggregated_roles", "lifecycle.owner_guard",
            "lifecycle.membership"} <= set(modules)
    code = (f"import sys, {', '.join(modules)}; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pulumi'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "[]"
