"""The lab as tests and the benchmark see it: its `lab.json`, brought up once per session."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client, config

from lab.clusters import Kwok
from lab.paths import REPO, LabDir, lab_dir
from lab.toolchain import tool_env


@dataclass(frozen=True)
class Cluster:
    name: str
    kubeconfig: str

    def api(self) -> client.ApiClient:
        return config.new_client_from_config(config_file=self.kubeconfig)


@dataclass(frozen=True)
class Lab:
    hub: Cluster
    spokes: tuple[Cluster, ...]
    provider_file: str
    bin: Path
    raw: dict
    dir: LabDir

    def spoke(self, name: str) -> Cluster:
        return next(s for s in self.spokes if s.name == name)

    def kwok(self) -> Kwok:
        """kwokctl against this lab's clusters (their pids, logs, stop and start)."""
        return Kwok(self.bin, tool_env(self.bin), self.dir)


def ensure_lab(root: Path | None = None, webhooks: bool = False) -> Lab:
    """Reads the lab description (in `root`, else `.lab/`); brings the lab up first if it is
    not there, with Knative's webhooks and webhook admission when `webhooks` (a lab that is
    up keeps the mode it was brought up in)."""
    where = lab_dir(root)
    if not where.description.exists():
        flags = ["--webhooks"] if webhooks else []
        subprocess.run([sys.executable, "-m", "lab", "--dir", str(where.root), "up", *flags],
                       cwd=REPO, check=True)
    raw = json.loads(where.description.read_text())
    return Lab(
        hub=Cluster(raw["hub"]["name"], raw["hub"]["kubeconfig"]),
        spokes=tuple(Cluster(s["name"], s["kubeconfig"]) for s in raw["spokes"]),
        provider_file=raw["providerFile"],
        bin=Path(raw["bin"]),
        raw=raw,
        dir=where,
    )


def wrong_mode(lab: Lab) -> str:
    """Why the suite cannot run on `lab` ("" when it can): every end-to-end test runs on a
    lab with Knative's webhooks, and a lab that is up keeps its mode."""
    if lab.dir.webhooks_on:
        return ""
    return (f"the lab in {lab.dir.root} runs without Knative's webhooks (brought up by `make "
            "demo` or `python -m lab up`), and every end-to-end test runs on a lab with them: "
            f"take it down (`python -m lab --dir {lab.dir.root} down`) and run again, or run "
            "`make test`")
