"""What the policy section measures, fixed in one place."""

from __future__ import annotations

from bench.metrics import Target

SPOKES = 1
PAIRS = 3  # with the policy and without it, in turn, this many times
FIGURES = ("s", "cpu_s", "spokes_cpu_s")  # wall, Pulumi side's CPU, the spoke's CPU
TARGETS = (
    Target("with_policy_install_s_vs_without", "install with the policy within 1.1x of "
           "without", 1.1),
)
