"""What the floor section measures, fixed in one place.

1. The Python SDK's floor: N resources of the program's release-object class with no
   inputs but a name, registered under the same mocks and runtime settings as the fleet
   section's program figures. Sizes: one spoke's worth of resources and 100 spokes'
   worth, as many as the program registers. Nothing the program adds (planning,
   objects, options) is in it: no registration of those resources can cost less.
2. What the program costs in a real run beside it: no-op previews of the product's stack
   of one spoke on a fresh spoke, the program's own CPU among the whole tree's.
"""

from __future__ import annotations

SPOKES = 1
PRODUCT_SPOKE = "spoke-1"
FLEET_SIZE = 100  # the 100-spoke targets' fleet
RUNS = 3  # each size of the floor, each in a fresh process
PAIRS = 5  # no-op previews of the product's stack
FIGURES = ("s", "cpu_s", "program_cpu_s")  # wall, the whole tree's CPU, the program's


def preview_key(figure: str) -> str:
    """The results key of one figure of the product's no-op preview."""
    return f"preview_product_{figure}"
