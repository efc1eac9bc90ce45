"""What the cost section measures, fixed in one place: the fleet sizes, the shardings run
through the fleet runner, the settings tried, and the targets."""

from __future__ import annotations

from dataclasses import dataclass, field

import psutil

from bench.metrics import Target

OPERATIONS = ("install", "preview", "destroy")
ONE_STACK = (1, 4, 8)  # spokes in one stack
VARIANT_SPOKES = 4  # the settings are tried on one stack of this many spokes


@dataclass(frozen=True)
class Sharding:
    """`stacks` stacks of `spokes` spokes each, all in ring 1, run by the fleet runner
    with `--parallel stacks`."""

    stacks: int
    spokes: int

    @property
    def key(self) -> str:
        return f"{self.stacks}x{self.spokes}"

    @property
    def total(self) -> int:
        return self.stacks * self.spokes


SHARDINGS = (Sharding(2, 4), Sharding(4, 4))


@dataclass(frozen=True)
class Variant:
    """An engine or provider setting tried against the defaults: extra `pulumi` flags
    and environment for the engine and every plugin it starts."""

    name: str
    what: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.name.replace("-", "_")


VARIANTS = (
    Variant("parallel-32", "`--parallel 32` (the CLI's default is 8 on 2 cores)",
            args=("--parallel", "32")),
    Variant("serial-diff", "`PULUMI_PARALLEL_DIFF=false` (diffs one at a time, Pulumi's "
            "default; the defaults here, the README's setting, run them in parallel)",
            env={"PULUMI_PARALLEL_DIFF": "false"}),
    Variant("gogc-50", "`GOGC=50` for the engine and the providers (Go: collect at 50% "
            "heap growth instead of 100%)", env={"GOGC": "50"}),
    Variant("gomemlimit-200", "`GOMEMLIMIT=200MiB` for the engine and the providers (Go: "
            "collect harder as a process nears 200 MiB)", env={"GOMEMLIMIT": "200MiB"}),
)

MB = 1_000_000
TARGETS: tuple[Target, ...] = (
    Target("one_install_extra_vs_single", "CPU per extra spoke <= 1.2x a single spoke's, "
           "install", 1.2),
    Target("one_preview_extra_vs_single", "CPU per extra spoke <= 1.2x a single spoke's, "
           "no-op preview", 1.2),
    Target("one_destroy_extra_vs_single", "CPU per extra spoke <= 1.2x a single spoke's, "
           "destroy", 1.2),
    Target("one_install_rss_per_extra_spoke_bytes", "memory per extra spoke <= 150 MB",
           150 * MB),
    Target("shards_4x4_install_busy_pct", "runner, 4 stacks: machine CPU >= 85% busy",
           85.0, at_least=True),
    Target("shards_4x4_machine_used_peak_bytes",
           "16 spokes as 4x4: machine memory in use within its RAM (the most of install, "
           "preview and destroy)",
           float(psutil.virtual_memory().total)),
)
