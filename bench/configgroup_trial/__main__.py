"""A trial, not the product: one spoke's release objects registered through
pulumi-kubernetes' provider-side `yaml/v2` ConfigGroup, one group per stage of
knative-fleet's install plan (registration.py says how).

Config: `spoke` (a name), `kubeconfig` (a file), `releaseBase`, `deleteCrds` (bool),
`registration` (`objs`, the default, or `yaml`).
Run by `python -m bench.breakdown` against a lab spoke.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's packages

from core.program_runtime import use_program_runtime  # noqa: E402

use_program_runtime()  # Python and the SDK as the product's program runs them

from bench.configgroup_trial.registration import register  # noqa: E402
from config.fleet import parse_fleet_config  # noqa: E402
from knative import plan as planning  # noqa: E402

cfg = pulumi.Config()
spoke = cfg.require("spoke")
delete_crds = cfg.require_bool("deleteCrds")
fleet = parse_fleet_config({
    "releaseBase": cfg.require("releaseBase"),
    "fleet": [{"name": spoke, "clusterProfileRef": {"name": spoke, "namespace": "fleet-system"},
               "serving": {"version": "1.23", "deleteCrdsOnDestroy": delete_crds},
               "eventing": {"version": "1.23", "deleteCrdsOnDestroy": delete_crds}}],
})
entry = fleet.fleet[0]
provider = k8s.Provider(
    spoke, kubeconfig=pulumi.Output.secret(Path(cfg.require("kubeconfig")).read_text()),
    enable_server_side_apply=True, enable_config_map_mutable=True,
    enable_secret_mutable=True)
register(spoke, planning.plan_spoke(entry.serving, entry.eventing, fleet.release_base, {}),
         provider, cfg.get("registration") or "objs")
