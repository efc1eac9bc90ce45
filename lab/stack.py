"""Drives the real Pulumi CLI (built by the toolchain) against a local file backend,
for the tests and the benchmark alike."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from core.settings import Binaries
from lab.toolchain import tool_env

PASSPHRASE = "knative-fleet-tests"
# The README's setting for self-managed backends: one state write per run instead of
# two full rewrites per object (docs/performance.md, "Self-managed backends and the
# engine's diffs").
SKIP_CHECKPOINTS = "PULUMI_SKIP_CHECKPOINTS"
# The README's setting for every stack: each object's Diff call off the engine's
# one-at-a-time step loop (same section).
PARALLEL_DIFF = "PULUMI_PARALLEL_DIFF"


@dataclass
class Result:
    """A finished pulumi command: its exit code and its combined output."""

    code: int
    out: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def why(self) -> str:
        """The output with its error lines first: a failure message cut short (a CI
        log's middle) still says what failed."""
        errors = list(dict.fromkeys(
            line.strip()[:500] for line in self.out.splitlines()
            if "error:" in line or line.lstrip().startswith("* ")))
        head = "\n".join(errors[:12])
        return f"exit {self.code}; errors first:\n{head}\n--- the whole output:\n{self.out}"


class Stack:
    """One stack of a Pulumi project, run through the CLI as a user would."""

    def __init__(self, project_dir: Path, stack: str, state_dir: Path, bin_dir: Path,
                 env: dict[str, str] | None = None, binaries: Binaries | None = None) -> None:
        """`binaries`: the Pulumi CLI and Kubernetes provider as released or patched
        (KNATIVE_FLEET_BINARIES unless given)."""
        self.project_dir = project_dir
        self.stack = stack
        state_dir.mkdir(parents=True, exist_ok=True)
        self.env = tool_env(bin_dir, binaries=binaries, extra={
            "PULUMI_BACKEND_URL": f"file://{state_dir}",
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            SKIP_CHECKPOINTS: "true",
            PARALLEL_DIFF: "true",
            **(env or {}),
        })

    def run(self, *args: str, timeout: float = 1200) -> Result:
        proc = subprocess.run(
            ["pulumi", *args, "--stack", self.stack, "--non-interactive"],
            cwd=self.project_dir, env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout)

    def init(self) -> None:
        subprocess.run(
            ["pulumi", "stack", "select", self.stack, "--create", "--non-interactive"],
            cwd=self.project_dir, env=self.env, check=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
        )

    def config_file(self, stack_config_dir: Path) -> Path:
        return stack_config_dir / f"Pulumi.{self.stack}.yaml"

    def write_config(self, stack_config_dir: Path, config: dict) -> None:
        """Replaces the stack's config, keeping the encryption salt Pulumi wrote."""
        path = self.config_file(stack_config_dir)
        current = yaml.safe_load(path.read_text()) if path.exists() else {}
        current = current or {}
        current["config"] = config
        path.write_text(yaml.safe_dump(current, sort_keys=False))

    def up(self, *extra: str) -> Result:
        return self.run("up", "--yes", "--skip-preview", *extra)

    def preview(self, *extra: str) -> Result:
        return self.run("preview", "--diff", *extra)

    def destroy(self, *extra: str) -> Result:
        return self.run("destroy", "--yes", "--skip-preview", *extra)

    def export(self) -> dict:
        res = self.run("stack", "export", "--show-secrets=false")
        assert res.ok, res.why
        return json.loads(res.out)

    def outputs(self) -> dict:
        res = self.run("stack", "output", "--json")
        assert res.ok, res.why
        return json.loads(res.out)

    def history(self) -> list[dict]:
        """`pulumi stack history --json`: the stack's updates, newest first."""
        res = self.run("stack", "history", "--json")
        assert res.ok, res.why
        return json.loads(res.out)

    def remove(self) -> None:
        self.run("stack", "rm", "--yes", "--force")


def update_time(entry: dict, key: str) -> datetime:
    """`startTime` or `endTime` of a `stack history` entry."""
    return datetime.fromisoformat(entry[key].replace("Z", "+00:00"))
