"""What the floor benchmark measures, fixed in one place.

1. The Python SDK's floor: N resources of the program's release-object class with no
   inputs but a name, registered under the same mocks and runtime settings as
   `python -m bench`'s program figures. Sizes: one spoke's worth of resources and 100
   spokes' worth, as many as the program registers. Nothing the program adds (planning,
   objects, options) is in it: no registration of those resources can cost less.
2. What a real run costs on each path, no-op previews in turn on a lab of two fresh
   spokes: the product's stack on one (`product`, one Python resource per object); on the
   other the ConfigGroup trial (bench/configgroup_trial), its groups as they are (`objs`,
   `yaml`) and with the transform that gives every child the alias a stack installed with
   one resource per object needs to move without a delete (`objs-aliased`,
   `yaml-aliased`). The engine calls that transform back in the program for every
   child, in a real run only: under mocks there are no children.
"""

from __future__ import annotations

from bench.configgroup_trial.registration import ALIASED
from bench.configgroup_trial.registration import MODES as TRIAL_PATHS
from bench.design import TRIAL_MODES
from bench.program import PRODUCT
from lab.paths import REPO

FLOOR_LAB = REPO / ".lab-bench-floor"  # its own lab: never the tests' or another's
RESULTS_JSON = REPO / "bench" / "floor-results.json"
SECTION = "floor"
SPOKES = 2
PRODUCT_SPOKE, TRIAL_SPOKE = "spoke-1", "spoke-2"
FLEET_SIZE = 100  # the 100-spoke targets' fleet
RUNS = 3  # each size of the floor, each in a fresh process
PAIRS = 5  # no-op previews of each registration, in turn
INSTALLED = TRIAL_MODES[0]  # the trial's stack is installed with this one
MODES = (PRODUCT, *TRIAL_PATHS)  # previewed in turn, in this order
# Each mode of the trial with its aliased form: what the aliases cost.
ALIAS_PAIRS = tuple((mode, f"{mode}{ALIASED}") for mode in TRIAL_MODES)
