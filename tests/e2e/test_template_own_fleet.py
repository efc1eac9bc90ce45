"""The package's `pulumi new` template, then README steps 4 to 6 word for word: README steps
1 and 2 (the released Pulumi, the virtualenv), the block of docs/package.md's "A new fleet
project from the template" (`pulumi new`, offline, from the template), the group set to the
test's fleet as a reader edits the stack file, then README steps 4 to 6 in the new project and
step 7 to remove it, in one bash session, in a fresh copy of the project. The fleet and the
identities are those of tests/e2e/test_readme_own_fleet.py: ClusterProfiles of an inventory
namespace of the test's own, the hub and the spokes reached as ServiceAccounts with no right
but what step 5 applies.

The tests run in file order and share one install."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from lab.handle import Lab
from lab.own_fleet import OwnFleet, Profile
from lab.paths import REPO
from lab.yaml_stack import yaml_host
from tests.e2e.test_readme_own_fleet import (
    HEADING,
    copy_project,
    exported_names,
    reader_values,
    session_env,
    values_text,
)
from tests.support.fleet import deployments_available
from tests.support.readme_blocks import Block, Session, assigned, blocks, split_values
from tests.support.snapshot import kept_by_policy, snapshot

pytestmark = pytest.mark.e2e
TEMPLATE_HEADING = "## A new fleet project from the template"
SERVING, EVENTING = "knative-serving", "knative-eventing"


def readme_step(steps: list[Block], pattern: str) -> Block:
    """The README block that matches `pattern`."""
    (block,) = [b for b in steps if re.search(pattern, b.text, re.MULTILINE)]
    return block


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    tmp = tmp_path_factory.mktemp("template")
    values_block, steps = split_values(
        blocks((REPO / "README.md").read_text(), HEADING), HEADING)
    ident = uuid.uuid4().hex[:6]
    s1, s2 = lab.spokes[:2]
    fleet = OwnFleet(lab, f"tpl-{ident}", f"tpl-{ident}-deployer", f"tpl-{ident}-spoke", [
        Profile("eu-1", {"env": "staging"}, s1),
        Profile("eu-2", {"env": "prod"}, s2),
        Profile("us-1", {"env": "prod"}, s1)])
    values = reader_values(lab, tmp, fleet, f"tpl-{ident}", "prod", "{matchLabels: {env: prod}}")
    assert assigned(values_block) == set(values)
    project = copy_project(tmp / "knative-fleet")
    env = session_env(tmp, lab)
    # The YAML language host on PATH, beside the session's kubectl.
    (tmp / "tools" / "pulumi-language-yaml").symlink_to(yaml_host() / "pulumi-language-yaml")
    session = Session(project, env, tmp / "blocks", tmp / "session.log")
    state = {"lab": lab, "fleet": fleet, "project": project, "values": values,
             "session": session, "steps": steps, "tmp": tmp, "removed": False}
    try:
        fleet.create(Path(str(values["HUB_KUBECONFIG"])), str(values["HUB_CONTEXT"]))
        state["before"] = {s.name: snapshot(s.api()) for s in (s1, s2)}
        session.source(values_text(values, exported_names(values_block)), "the test's values")
        yield state
    finally:
        if not state["removed"]:
            try:
                session.source(readme_step(steps, r"^pulumi destroy").text, "README step 7")
            except AssertionError:
                pass
        session.close()
        fleet.remove(f"knative-fleet-{values['STACK']}")


def test_pulumi_new_makes_the_stack_file_offline(world: dict) -> None:
    session: Session = world["session"]
    steps: list[Block] = world["steps"]
    session.source(readme_step(steps, r"pulumi plugin install").text, "README step 1")
    session.source(readme_step(steps, r"^make venv").text, "README step 2")
    (block,) = blocks((REPO / "docs" / "package.md").read_text(), TEMPLATE_HEADING)
    session.source(block.text, "docs/package.md: the template")
    stack = str(world["values"]["STACK"])
    project = world["project"] / "fleets" / stack
    stack_file = project / "stacks" / f"Pulumi.{stack}.yaml"
    config = yaml.safe_load(stack_file.read_text())["config"]
    (group,) = config["knative-fleet:groups"]
    assert group["namespace"] == "fleet-system"  # the inventory namespace, to be set
    assert config["knative-fleet:providerFile"]
    # The reader sets the group to their fleet: its inventory namespace and selector.
    text = stack_file.read_text().replace("namespace: fleet-system",
                                          f"namespace: {world['fleet'].namespace}")
    stack_file.write_text(text)
    world["stack_file"] = stack_file


def test_readme_steps_4_to_6_install_the_group(world: dict) -> None:
    session: Session = world["session"]
    steps: list[Block] = world["steps"]
    session.source(readme_step(steps, r"^pulumi stack init").text, "README step 4")
    config = yaml.safe_load(world["stack_file"].read_text())
    assert "encryptionsalt" in config  # step 4's stack init kept the template's file
    assert config["config"]["knative-fleet:hub"]["kubeconfig"] == world["values"]["HUB_KUBECONFIG"]
    session.source(readme_step(steps, r"kubectl .*apply").text, "README step 5")
    out = session.source(readme_step(steps, r"^pulumi up").text, "README step 6")
    assert "eu-2" in out and "us-1" in out, out[-4000:]
    s1, s2 = world["lab"].spokes[:2]
    for api in (s1.api(), s2.api()):
        for namespace in (SERVING, EVENTING):
            available = deployments_available(api, namespace)
            assert available and all(available.values()), (namespace, available)
    spokes = json.loads(session.source("pulumi stack output spokes --json\n", "outputs"))
    assert set(spokes) == {"eu-2", "us-1"}, spokes  # eu-1 is not selected
    assert all(s["ready"] is True for s in spokes.values()), spokes


def test_readme_step_7_removes_everything(world: dict) -> None:
    session: Session = world["session"]
    session.source(readme_step(world["steps"], r"^pulumi destroy").text, "README step 7")
    world["removed"] = True
    for spoke in world["lab"].spokes[:2]:
        after = snapshot(spoke.api())
        leaked = after - world["before"][spoke.name] - kept_by_policy(after)
        assert leaked == set(), (spoke.name, sorted(leaked)[:20])
