"""Where a lab keeps its state: `.lab/` in the repo (ignored by git) unless told otherwise,
so the tests' lab and the benchmark's lab (`.lab-bench/`) never share a file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.settings import settings

REPO = Path(__file__).resolve().parent.parent
LAB_DIR = REPO / ".lab"
# Read when a lab directory is resolved, never at import: a caller may set it late.
LAB_DIR_ENV = "KNATIVE_FLEET_LAB_DIR"
SHARED = settings().shared or REPO.parent / "shared"
CLUSTERPROFILE_CRD = (
    SHARED / "cluster-inventory-api" / "v0.1.2" / "multicluster.x-k8s.io_clusterprofiles.yaml"
)
RELEASES = SHARED / "knative-releases"
# The Pulumi Kubernetes Operator's CRDs, unmodified, for validating the runner's Stack objects.
PULUMI_OPERATOR_CRDS = SHARED / "pulumi-kubernetes-operator" / "v2.9.0-8-g475dbc6c"


@dataclass(frozen=True)
class LabDir:
    """The files of one lab, all under `root`."""

    root: Path

    @property
    def description(self) -> Path:
        """`lab.json`: what `python -m lab up` brought up."""
        return self.root / "lab.json"

    @property
    def kwok(self) -> Path:
        """kwokctl's work directory (KWOK_WORKDIR): clusters, pid files, logs."""
        return self.root / "kwok"

    @property
    def kwokctl_config(self) -> Path:
        return self.root / "kwokctl.yaml"

    @property
    def providers(self) -> Path:
        """The access-provider file the product reads for this lab's hub."""
        return self.root / "providers.json"

    @property
    def egress(self) -> Path:
        """Each cluster's egress configuration (`<cluster>.yaml`), which also tells the
        webhook host which clusters the lab has, and their proxies' sockets."""
        return self.root / "egress"

    @property
    def webhooks(self) -> Path:
        """The webhook host's pid and log, and its webhook processes' logs per cluster."""
        return self.root / "webhooks"

    @property
    def webhooks_on(self) -> bool:
        """Whether this lab's clusters run Knative's webhooks with webhook admission on
        (`python -m lab up --webhooks`, lab.webhooks); otherwise they skip webhook admission."""
        return (self.webhooks / "enabled").exists()

    @property
    def dump(self) -> Path:
        return self.root / "dump"

    @property
    def state(self) -> Path:
        """The file state backend of the stacks run on this lab (the Makefile's demo
        stack, the benchmarks'): it describes objects on this lab's clusters only."""
        return self.root / "state"

    def kubeconfig(self, cluster: str) -> Path:
        return self.root / f"{cluster}.kubeconfig"


def lab_dir(root: Path | str | None = None) -> LabDir:
    """`root` when given, else $KNATIVE_FLEET_LAB_DIR as it is now, else `.lab/`."""
    if root is None:
        root = settings().lab_dir or LAB_DIR
    return LabDir(Path(root).absolute())


def worker_lab_dir(worker: str | None, root: Path | str | None = None) -> LabDir:
    """The lab of one pytest-xdist worker: `gw0` (or no worker) uses the lab itself,
    `gwN` a sibling `<lab>-gwN/`, so workers never stop, grow or fill each other's
    clusters."""
    base = lab_dir(root)
    if not worker or worker == "gw0":
        return base
    return LabDir(base.root.with_name(f"{base.root.name}-{worker}"))
