"""What the levers section measures, fixed in one place: the spoke, the settings tried and
how many pairs of runs."""

from __future__ import annotations

import os

from bench.cost.design import Variant
from lab.paths import REPO

TOOLCHAIN_SCRIPT = REPO / "toolchain" / "build.sh"
SPOKES = 1
PAIRS = 3  # each setting runs beside the defaults this many times, in turn
FIGURES = ("s", "cpu_s", "spokes_cpu_s")  # wall, Pulumi side's CPU, the spoke's CPU

# The provider's Kubernetes client allows 50 requests per second with bursts of 120
# (pulumi-kubernetes' defaults, `PULUMI_K8S_CLIENT_QPS`/`_BURST`): an install makes
# about 400 of its own requests, most in its first seconds.
LEVERS = (
    Variant("client-qps-1000", "the provider's client at 1000 requests per second, bursts "
            "of 2000 (`PULUMI_K8S_CLIENT_QPS=1000`, `PULUMI_K8S_CLIENT_BURST=2000`; the "
            "defaults are 50 and 120)",
            env={"PULUMI_K8S_CLIENT_QPS": "1000", "PULUMI_K8S_CLIENT_BURST": "2000"}),
    Variant("serial-diff", "the engine's diffs inside its one-at-a-time step loop, "
            "each object's Diff call to the provider right after its Check, as Pulumi does "
            "by default (`PULUMI_PARALLEL_DIFF=false`; the defaults here, the README's "
            "setting, take them out of that loop)",
            env={"PULUMI_PARALLEL_DIFF": "false"}),
)


STOCK_PROVIDER = Variant(
    "stock-provider", "pulumi-kubernetes 4.25.0 as released (`toolchain/build.sh "
    "--stock-provider`), found first on PATH: it drops its OpenAPI schema after each CRD it "
    "creates; the defaults are the toolchain's build without that drop (patch_provider)")
# Every setting the report shows, in order: LEVERS, then the stock provider, whose PATH
# is known only once the toolchain has built it.
REPORTED = (*LEVERS, STOCK_PROVIDER)


def stock_provider(stock_dir: str, path: str) -> Variant:
    """STOCK_PROVIDER with its directory first on PATH."""
    return Variant(STOCK_PROVIDER.name, STOCK_PROVIDER.what,
                   env={"PATH": stock_dir + os.pathsep + path})
