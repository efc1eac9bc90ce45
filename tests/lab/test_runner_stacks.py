"""The fleet runner on the real Pulumi engine (no Kubernetes): a throwaway Python
project whose stacks export the fleet program's outputs (`ring`, `spokes`) and fail,
as the fleet program does for an unreachable spoke, when their config says so.

Four stacks in two rings on a local file backend: with one ring-1 stack failing, `up`
stops after ring 1 and ring 2's stacks get no update at all; once fixed, `up` runs
ring 1 then ring 2; `status` shows every stack and spoke; `destroy` empties them all.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from lab.paths import REPO
from lab.stack import Stack, update_time
from lab.toolchain import bin_dir
from tests.support.runner import run_runner

PROGRAM = '''\
"""A stand-in for the fleet program: one component per spoke, the same outputs."""

import pulumi

fleet = pulumi.Config("knative-fleet")
tiny = pulumi.Config("tiny")
spokes = tiny.require_object("spokes")
broken = tiny.get("broken")


class Spoke(pulumi.ComponentResource):
    def __init__(self, name):
        super().__init__("tiny:index:Spoke", name)
        self.register_outputs({"ready": True})


outputs = {}
for name in spokes:
    if name == broken:
        pulumi.log.error(f"spoke '{name}': ClusterProfileNotFound: ClusterProfile "
                         f"fleet-system/{name} not found on the hub. Fix: register it")
        outputs[name] = {"clusterProfile": f"fleet-system/{name}", "ready": False,
                         "targetClusterResolved": {"status": "False",
                                                   "reason": "ClusterProfileNotFound",
                                                   "message": "not found"}}
        continue
    Spoke(name)
    outputs[name] = {"clusterProfile": f"fleet-system/{name}", "serving": "1.23.0",
                     "eventing": None, "ready": True,
                     "targetClusterResolved": {"status": "True", "reason": "Resolved",
                                               "message": "reached it"}}
pulumi.export("ring", fleet.get_int("ring") or 1)
pulumi.export("spokes", outputs)
if broken:
    raise pulumi.RunError(f"1 of {len(spokes)} spokes could not be resolved: {broken} "
                          "(ClusterProfileNotFound)")
'''

# stack -> (ring, spokes)
FLEET = {
    "tiny-r1-a": (1, ["a-1", "a-2"]),
    "tiny-r1-b": (1, ["b-1"]),
    "tiny-r2-a": (2, ["c-1", "c-2"]),
    "tiny-r2-b": (2, ["d-1"]),
}
BROKEN = ("tiny-r1-b", "b-1")


@dataclass
class World:
    project: Path
    stacks: dict[str, Stack]
    env: dict[str, str]


def stack_config(name: str, broken: str | None = None) -> dict:
    ring, spokes = FLEET[name]
    config: dict = {"knative-fleet:ring": ring, "tiny:spokes": spokes}
    if broken:
        config["tiny:broken"] = broken
    return config


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("runner")
    project = root / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "__main__.py").write_text(PROGRAM)
    (project / "Pulumi.yaml").write_text(textwrap.dedent(f"""\
        name: tiny-fleet
        runtime:
          name: python
          options:
            toolchain: pip
            virtualenv: {Path(sys.executable).parent.parent}
        stackConfigDir: stacks
        """))
    tools = bin_dir()
    stacks = {name: Stack(project, name, root / "state", tools) for name in FLEET}
    for name, stack in stacks.items():
        stack.init()  # every stack exists, so "never touched" means an empty history
        stack.write_config(project / "stacks",
                           stack_config(name, BROKEN[1] if name == BROKEN[0] else None))
    return World(project, stacks, next(iter(stacks.values())).env)


def runner(world: World, *args: str) -> tuple[int, dict, str]:
    """`python -m runner ... --json` over the throwaway project."""
    return run_runner(*args, "--project-dir", str(world.project), env=world.env)




def test_a_failed_ring_leaves_the_next_ring_untouched(world: World) -> None:
    code, doc, text = runner(world, "up", "--stacks", "tiny-*")
    assert code == 1, text
    assert doc["failed"] == ["tiny-r1-b"]
    assert doc["failedSpokes"] == {"tiny-r1-b": ["b-1"]}
    assert doc["succeeded"] == ["tiny-r1-a"]
    assert doc["untouched"] == ["tiny-r2-a", "tiny-r2-b"]
    assert doc["stoppedAtRing"] == 1
    failed = doc["rings"][0]["stacks"][1]
    assert "ClusterProfileNotFound" in failed["error"]
    assert "FAILED     tiny-r1-b" in text and "never touched: tiny-r2-a, tiny-r2-b" in text
    log = Path(failed["log"])
    assert log.is_file() and "tiny-r1-b" in log.read_text()
    assert (log.parent / "summary.json").is_file()
    for name in ("tiny-r2-a", "tiny-r2-b"):
        assert world.stacks[name].history() == [], name
    assert [h["result"] for h in world.stacks["tiny-r1-b"].history()] == ["failed"]
    assert world.stacks["tiny-r1-a"].outputs()["spokes"]["a-2"]["ready"] is True


def test_a_clean_run_completes_ring_after_ring(world: World) -> None:
    world.stacks[BROKEN[0]].write_config(world.project / "stacks", stack_config(BROKEN[0]))
    code, doc, text = runner(world, "up", "--stacks", "tiny-*")
    assert code == 0, text
    assert doc["succeeded"] == list(FLEET) and doc["failed"] == doc["untouched"] == []
    assert text.index("ring 1: tiny-r1-a, tiny-r1-b") < text.index(
        "ring 2: tiny-r2-a, tiny-r2-b")
    for name in FLEET:
        assert f"{name}  up started (ring {FLEET[name][0]}); log: " in text, text
    latest = {name: stack.history()[0] for name, stack in world.stacks.items()}
    assert all(h["kind"] == "update" and h["result"] == "succeeded" for h in latest.values())
    ring1_end = max(update_time(latest[n], "endTime") for n in ("tiny-r1-a", "tiny-r1-b"))
    ring2_start = min(update_time(latest[n], "startTime") for n in ("tiny-r2-a", "tiny-r2-b"))
    assert ring2_start >= ring1_end
    assert world.stacks["tiny-r2-a"].outputs()["ring"] == 2


def test_status_shows_every_stack_and_spoke(world: World) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "status", "--stacks", "tiny-*", "--project-dir",
         str(world.project)], cwd=REPO, env=world.env, capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "4 stacks (0 not created, 0 unreadable), 6 spokes: 6 resolved, 6 ready" in \
        proc.stdout, proc.stdout
    code, doc, _ = runner(world, "status", "--stacks", "tiny-*")
    assert code == 0
    got = {s["stack"]: (s["ring"], [sp["spoke"] for sp in s["spokes"]]) for s in doc["stacks"]}
    assert got == {name: (ring, sorted(spokes)) for name, (ring, spokes) in FLEET.items()}
    assert all(s["lastUpdate"]["kind"] == "update" and s["lastUpdate"]["result"] == "succeeded"
               for s in doc["stacks"])


def test_destroy_through_the_runner_empties_every_stack(world: World) -> None:
    code, doc, text = runner(world, "destroy", "--stacks", "tiny-*")
    assert code == 0, text
    assert doc["succeeded"] == list(FLEET)
    for name, stack in world.stacks.items():
        assert stack.outputs() == {}, name
        assert stack.history()[0]["kind"] == "destroy", name
        resources = stack.export().get("deployment", {}).get("resources") or []
        assert resources == [], name
