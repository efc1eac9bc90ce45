"""The lab as tests see it: `.lab/lab.json`, brought up once per session."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client, config

from lab.paths import LAB_JSON, REPO


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

    def spoke(self, name: str) -> Cluster:
        return next(s for s in self.spokes if s.name == name)


def ensure_lab() -> Lab:
    """Reads the lab description; brings the lab up first if it is not there."""
    if not LAB_JSON.exists():
        subprocess.run([sys.executable, "-m", "lab", "up"], cwd=REPO, check=True)
    raw = json.loads(LAB_JSON.read_text())
    return Lab(
        hub=Cluster(raw["hub"]["name"], raw["hub"]["kubeconfig"]),
        spokes=tuple(Cluster(s["name"], s["kubeconfig"]) for s in raw["spokes"]),
        provider_file=raw["providerFile"],
        bin=Path(raw["bin"]),
        raw=raw,
    )
