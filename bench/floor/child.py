"""`python -m bench.floor.child N`: N release objects with no inputs but a name,
registered under mocks with the program's runtime settings (core/program_runtime.py);
prints one JSON line (the size, its milliseconds and this process's peak memory)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def register_floor(n: int) -> dict[str, Any]:
    """Registers `n` resources as the program registers a release object, minus its
    inputs, and waits for every one."""
    import pulumi

    from bench.program import own_peak_rss_bytes
    from core.program_runtime import use_program_runtime

    use_program_runtime()

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
            return f"{args.name}-id", {}

        def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
            return {}

    pulumi.runtime.set_mocks(Mocks(), preview=False)
    from components.release_object import ReleaseObject

    @pulumi.runtime.test
    def program() -> Any:
        objs = [ReleaseObject("kubernetes:core/v1:ConfigMap", f"floor-{i}",
                              {"metadata": {"name": f"floor-{i}"}}) for i in range(n)]
        return pulumi.Output.all(*[o.urn for o in objs])

    start = time.perf_counter()
    program()
    ms = (time.perf_counter() - start) * 1000
    return {"resources": n, "ms": ms, "peak_rss_bytes": own_peak_rss_bytes()}


if __name__ == "__main__":
    print(json.dumps(register_floor(int(sys.argv[1]))))
