"""What the fleet section measures, fixed in one place: the sets of Pulumi binaries it
holds against kubectl, which spoke each side installs on, the fleet and program sizes, the
one-key change, and the targets the report checks."""

from __future__ import annotations

from bench.metrics import Target
from core.settings import Binaries

RUNS = 3  # runs of every measurement, each figure their median
# Measurements 1-4 run on each set, in this order, on the same spoke. The released set
# (what users run) gives the headline figures, under the keys the targets read; the
# patched set's are the same keys prefixed `patched_`.
BINARIES: tuple[Binaries, ...] = ("released", "patched")
HEADLINE: Binaries = "released"
WHAT: dict[Binaries, str] = {
    "released": "what users run",
    "patched": "the toolchain's build with toolchain/patches/",
}
SPOKES = 4
FLEET_SPOKE = "spoke-1"  # knative-fleet installs here in measurements 1-4
KUBECTL_SPOKE = "spoke-2"  # the kubectl baseline installs here
GROWTH = (1, 2, 4)
PROGRAM_SIZES = (1, 10, 100)
# Measurement 3: one key of one ConfigMap, through the entry's `config`.
SMALL_CHANGE = {"autoscaler": {"max-scale-up-rate": "500.0"}}
SMALL_CHANGE_CM = ("knative-serving", "config-autoscaler", "max-scale-up-rate")
STATE_LIMIT = 1_000_000  # bytes per spoke, compact JSON ("1 MB")
# The spoke's control plane works on its own (leases, node heartbeats, controllers'
# resyncs); its CPU over this window, on the empty spoke before each install, is taken
# off both installs' control-plane CPU to compare what each install itself costs it.
IDLE_WINDOW_S = 15.0


def key_prefix(binaries: Binaries) -> str:
    """What a set's figures are keyed under: nothing for the headline set, so results
    written before both sets were measured read the same."""
    return "" if binaries == HEADLINE else f"{binaries}_"


# PASS when the figure is at most the limit; judged on the headline set's figures.
TARGETS: tuple[Target, ...] = (
    Target("install_ratio", "install <= 1.2x kubectl apply + wait", 1.2),
    Target("install_spoke_cpu_ratio", "the spoke's control-plane CPU per install <= 1.2x "
           "kubectl's", 1.2),
    Target("noop_preview_ratio", "no-op preview <= 2x kubectl diff", 2.0),
    Target("destroy_ratio", "destroy <= 2x kubectl delete --wait", 2.0),
    Target("growth_4_vs_1", "install, 4 spokes <= 2x 1 spoke", 2.0),
    Target("growth_preview_4_vs_1", "no-op preview, 4 spokes <= 2x 1 spoke", 2.0),
    Target("growth_destroy_4_vs_1", "destroy, 4 spokes <= 2x 1 spoke", 2.0),
    Target("program_ms_per_spoke", "program <= 50 ms per extra spoke", 50.0),
    Target("program_ms_100", "program under mocks, 100 spokes < 10 s", 10_000.0),
    Target("program_peak_rss_bytes_100", "program under mocks, 100 spokes < 500 MB",
           500_000_000.0),
    Target("state_compact_bytes_per_spoke", "state <= 1 MB per spoke (compact)",
           float(STATE_LIMIT)),
    Target("install_defaults_ratio", "install with Pulumi's defaults <= 1.5x kubectl", 1.5),
    Target("noop_preview_defaults_ratio", "no-op preview with Pulumi's defaults (its log "
           "on) <= 2x kubectl diff", 2.0),
)
