"""Where the lab keeps its state: `.lab/` in the repo (ignored by git)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAB_DIR = Path(os.environ.get("KNATIVE_FLEET_LAB_DIR", REPO / ".lab"))
LAB_JSON = LAB_DIR / "lab.json"
KWOK_WORKDIR = LAB_DIR / "kwok"
SHARED = Path(os.environ.get("KNATIVE_FLEET_SHARED", REPO.parent / "shared"))
CLUSTERPROFILE_CRD = (
    SHARED / "cluster-inventory-api" / "v0.1.2" / "multicluster.x-k8s.io_clusterprofiles.yaml"
)
RELEASES = SHARED / "knative-releases"
