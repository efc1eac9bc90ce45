"""Which stacks a run takes: the stack config files of the project, a name pattern, a
ring, and a shard of a CI matrix.

Read from the files (`<stackConfigDir>/Pulumi.<stack>.yaml`), never by running the
program: choosing 200 stacks must not cost 200 program runs. The ring is the
`knative-fleet:ring` key, read as the program reads it (a text value is parsed as
JSON first) and checked by the same rule as the program's config model
(config.fleet.Ring), so the runner and the program never disagree about it.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import TypeAdapter, ValidationError

from config.fleet import CONFIG_NAMESPACE, DEFAULT_RING, Ring
from core.errors import SelectionError

RING_KEY = f"{CONFIG_NAMESPACE}:ring"
_STACK_FILE = re.compile(r"^Pulumi\.(?P<name>.+)\.ya?ml$")
_RING = TypeAdapter(Ring)


@dataclass(frozen=True, order=True)
class StackFile:
    """A stack known from its config file; sorted by ring, then name."""

    ring: int
    name: str
    path: Path


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`: a CI matrix job's part of every ring."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise SelectionError(f"--shard must look like i/n (e.g. 1/4), got {text!r}")
        index, count = int(match[1]), int(match[2])
        if count < 1 or not 1 <= index <= count:
            raise SelectionError(f"--shard {text}: need 1 <= i <= n, got i={index}, n={count}")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def project_name(project_dir: Path) -> str:
    return str(_project_settings(project_dir).get("name", ""))


def stack_config_dir(project_dir: Path) -> Path:
    """Where the project keeps its stack files: Pulumi.yaml's `stackConfigDir`, or the
    project directory itself (Pulumi's default)."""
    sub = _project_settings(project_dir).get("stackConfigDir")
    return project_dir / sub if sub else project_dir


def _project_settings(project_dir: Path) -> dict:
    for name in ("Pulumi.yaml", "Pulumi.yml"):
        path = project_dir / name
        if path.is_file():
            return yaml.safe_load(path.read_text()) or {}
    raise SelectionError(f"{project_dir} is not a Pulumi project (no Pulumi.yaml); "
                         "pass the project with --project-dir")


def read_ring(path: Path) -> int:
    """The stack's ring from its config file; DEFAULT_RING when the key is absent."""
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise SelectionError(f"{path}: not valid YAML: {exc}") from None
    config = (doc.get("config") or {}) if isinstance(doc, dict) else {}
    if not isinstance(config, dict) or RING_KEY not in config:
        return DEFAULT_RING
    value = config[RING_KEY]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass  # left as text: the check below names it
    try:
        return _RING.validate_python(value)
    except ValidationError:
        raise SelectionError(
            f"{path}: {RING_KEY} must be a whole number from 1, got {config[RING_KEY]!r}"
        ) from None


def discover(project_dir: Path) -> list[StackFile]:
    """Every stack that has a config file, with its ring; every bad ring is reported
    in one error."""
    config_dir = stack_config_dir(project_dir)
    stacks, problems = [], []
    for path in sorted(config_dir.glob("Pulumi.*.y*ml")):
        match = _STACK_FILE.match(path.name)
        if not match:
            continue
        try:
            stacks.append(StackFile(read_ring(path), match["name"], path))
        except FileNotFoundError:
            continue  # removed since the listing: no longer a stack of this fleet
        except SelectionError as exc:
            problems.append(str(exc))
    if problems:
        raise SelectionError("\n".join(problems))
    return sorted(stacks)


def matching(stacks: list[StackFile], pattern: str) -> list[StackFile]:
    """The stacks whose name matches the shell-style pattern (`prod-*`, `eu-?-ring1`);
    several patterns may be given separated by commas."""
    patterns = [p.strip() for p in pattern.split(",") if p.strip()]
    return [s for s in stacks if any(fnmatch.fnmatchcase(s.name, p) for p in patterns)]


def in_rings(stacks: list[StackFile], rings: set[int] | None) -> list[StackFile]:
    return [s for s in stacks if rings is None or s.ring in rings]


def shard_of(stacks: list[StackFile], shard: Shard | None) -> list[StackFile]:
    """This shard's part of every ring: within a ring, sorted by name, the k-th stack
    (from 0) goes to shard k mod n + 1. Deterministic, so n matrix jobs that each run
    the same command with their own i cover every stack exactly once, and each ring's
    stacks are spread over the jobs."""
    if shard is None:
        return list(stacks)
    by_ring: dict[int, list[StackFile]] = {}
    for stack in stacks:
        by_ring.setdefault(stack.ring, []).append(stack)
    chosen = []
    for ring in sorted(by_ring):
        ordered = sorted(by_ring[ring], key=lambda s: s.name)
        chosen += [s for k, s in enumerate(ordered) if k % shard.count == shard.index - 1]
    return sorted(chosen)


def fleet(project_dir: Path, pattern: str) -> list[StackFile]:
    """Every stack the pattern names, in every ring and every shard: what the run's
    stacks are checked against (runner.overlap). A pattern that matches no stack file
    is an error (a typo must not look like an empty, successful rollout)."""
    found = discover(project_dir)
    chosen = matching(found, pattern)
    if not chosen:
        known = ", ".join(s.name for s in found) or "none"
        raise SelectionError(f"no stack file in {stack_config_dir(project_dir)} matches "
                             f"{pattern!r}; stacks there: {known}")
    return chosen


def select(project_dir: Path, pattern: str, shard: Shard | None = None,
           rings: set[int] | None = None) -> list[StackFile]:
    """The run's stacks: the pattern's (see `fleet`). A ring or a shard with none of
    the matching stacks is no error: a CI job per ring, or a matrix with more jobs than
    a ring has stacks, then has nothing to do."""
    return shard_of(in_rings(fleet(project_dir, pattern), rings), shard)
