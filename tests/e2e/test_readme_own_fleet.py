"""The README's "Using it on your own fleet", run word for word: every command block of the
section in order, in one bash session, in a fresh copy of the project with a new stack and
a file backend of its own, on the Pulumi CLI and Kubernetes provider exactly as released
(the section's own step 1 gets them: no Pulumi is on the session's PATH). Only the
section's "your values" block is the test's own: the lab's hub as the reader's hub,
reached as a ServiceAccount with no right but the hub Role the section applies; the lab's
spokes behind ClusterProfiles of an inventory namespace of the test's own, each reached
as a ServiceAccount with no right but the spoke ClusterRole the section applies. So the
README cannot say a command that does not work.

The tests run in file order, each the section's next blocks, and share one install."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from lab.handle import Lab
from lab.own_fleet import OwnFleet, Profile
from lab.paths import RELEASES, REPO, SHARED
from lab.toolchain import pulumi_bin, pulumi_home
from tests.support.fleet import deployments_available
from tests.support.readme_blocks import (
    Block,
    ReadmeError,
    Session,
    assigned,
    blocks,
    split_values,
)
from tests.support.snapshot import kept_by_policy, snapshot

pytestmark = pytest.mark.e2e
HEADING = "## Using it on your own fleet"
SERVING, EVENTING = "knative-serving", "knative-eventing"
CLUSTERPROFILES = ("multicluster.x-k8s.io", "clusterprofiles")


@dataclass
class World:
    lab: Lab
    fleet: OwnFleet
    project: Path
    values: dict[str, str | list[str]]
    session: Session
    steps: list[Block]
    before: dict[str, set]
    done: int = 0

    @property
    def stack(self) -> str:
        return str(self.values["STACK"])

    @property
    def role(self) -> str:
        return f"knative-fleet-{self.stack}"

    def run_through(self, pattern: str) -> str:
        """Runs the section's next blocks up to and including the first that matches
        `pattern`; their output."""
        out = []
        for block in self.steps[self.done:]:
            self.done += 1
            out.append(self.session.source(block.text, f"README line {block.line}"))
            if re.search(pattern, block.text, re.MULTILINE):
                return "".join(out)
        raise ReadmeError(f"README {HEADING!r}: no block left that matches {pattern!r}")

    def probe(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A command of the test's own in the session's environment and directory."""
        return subprocess.run(args, cwd=self.project, env=self.session.environment(),
                              capture_output=True, text=True, timeout=1200)


def copy_project(dest: Path) -> Path:
    """The project as a clone of the working tree has it: every file git tracks or would
    (not the ignored venv, labs or stacks of tests), and `../shared` beside it."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    (dest.parent / "shared").symlink_to(SHARED)
    return dest


def session_env(tmp: Path, lab: Lab) -> dict[str, str]:
    """A reader's shell: their own Pulumi home (empty), `kubectl` (the toolchain's, alone
    in a directory of its own) and the machine's tools on PATH; no Pulumi, no venv, no
    kubeconfig and none of the lab's settings."""
    tools = tmp / "tools"
    tools.mkdir()
    (tools / "kubectl").symlink_to(lab.bin / "kubectl")
    venv = str(Path(sys.executable).parent)
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and d != venv and not (Path(d) / "pulumi").exists()]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PULUMI_", "KNATIVE_FLEET_", "KUBECONFIG", "VIRTUAL_ENV"))
           or k == "KNATIVE_FLEET_CACHE"}
    env["PATH"] = os.pathsep.join([str(tools), *path])
    env["PULUMI_HOME"] = str(tmp / "pulumi-home")
    assert shutil.which("pulumi", path=env["PATH"]) is None
    return env


def reader_values(lab: Lab, tmp: Path, fleet: OwnFleet, stack: str, group: str,
                  selector: str) -> dict[str, str | list[str]]:
    """The section's first block as a reader of this lab fills it in: the state backend
    (a new directory under `tmp`), the stack, the two identities and the fleet's spokes."""
    s1, s2 = lab.spokes[:2]
    (tmp / "state").mkdir()
    return {
        "BACKEND_URL": f"file://{tmp / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": secrets.token_hex(16),
        "STACK": stack,
        "HUB_KUBECONFIG": str(tmp / "hub-deployer.kubeconfig"),
        "HUB_CONTEXT": "deployer",
        "HUB_SUBJECT": fleet.hub_subject,
        "HUB_ADMIN_KUBECONFIG": lab.hub.kubeconfig,
        "SPOKE_ADMIN_KUBECONFIGS": [s1.kubeconfig, s2.kubeconfig],
        "SPOKE_SUBJECT": fleet.spoke_subject,
        "PROVIDER_FILE": lab.provider_file,
        "RELEASE_BASE": f"file://{RELEASES}",
        "INVENTORY_NAMESPACE": fleet.namespace,
        "SPOKE": "eu-1",
        "GROUP": group,
        "GROUP_SELECTOR": selector,
    }


def values_text(values: dict[str, str | list[str]], exported: set[str]) -> str:
    lines = []
    for name, value in values.items():
        text = ("(" + " ".join(map(shlex.quote, value)) + ")" if isinstance(value, list)
                else shlex.quote(value))
        lines.append(f"{'export ' if name in exported else ''}{name}={text}")
    return "\n".join(lines) + "\n"


def exported_names(block: Block) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^\s*export\s+([A-Za-z_]\w*)=", block.text,
                                            re.MULTILINE)}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    started = time.monotonic()
    tmp = tmp_path_factory.mktemp("readme")
    values_block, steps = split_values(
        blocks((REPO / "README.md").read_text(), HEADING), HEADING)
    ident = uuid.uuid4().hex[:6]
    s1, s2 = lab.spokes[:2]
    fleet = OwnFleet(lab, f"readme-{ident}", f"readme-{ident}-deployer",
                     f"readme-{ident}-spoke", [
                         Profile("eu-1", {"env": "staging", "region": "eu"}, s1),
                         Profile("eu-2", {"env": "prod", "region": "eu"}, s2),
                         Profile("us-1", {"env": "prod", "region": "us"}, s1)])
    values = reader_values(lab, tmp, fleet, f"readme-{ident}", "prod-eu",
                           "{matchLabels: {env: prod, region: eu}}")
    if assigned(values_block) != set(values):
        raise ReadmeError(f"README line {values_block.line}: the values block sets "
                          f"{sorted(assigned(values_block))}; this test gives "
                          f"{sorted(values)}")
    project = copy_project(tmp / "knative-fleet")
    session = world = None
    try:
        fleet.create(Path(str(values["HUB_KUBECONFIG"])), str(values["HUB_CONTEXT"]))
        before = {s.name: snapshot(s.api()) for s in (s1, s2)}
        session = Session(project, session_env(tmp, lab), tmp / "blocks",
                          tmp / "session.log")
        session.source(values_text(values, exported_names(values_block)),
                       "the test's values")
        world = World(lab, fleet, project, values, session, steps, before)
        yield world
    finally:
        if session:
            session.close()
        if world is None or world.done < len(world.steps):
            teardown(lab, tmp, project, values)
        fleet.remove(f"knative-fleet-{values['STACK']}")
        print(f"\nREADME walk-through: {time.monotonic() - started:.0f}s "
              f"(session log: {tmp / 'session.log'})")


def teardown(lab: Lab, tmp: Path, project: Path, values: dict) -> None:
    """What the section's last block removes, if a failure stopped it first."""
    env = dict(os.environ, PULUMI_HOME=str(tmp / "pulumi-home"),
               PULUMI_BACKEND_URL=str(values["BACKEND_URL"]),
               PULUMI_CONFIG_PASSPHRASE=str(values["PULUMI_CONFIG_PASSPHRASE"]),
               PATH=os.pathsep.join([str(project / ".venv" / "bin"),
                                     str(pulumi_bin(lab.bin, "released")),
                                     os.environ["PATH"]]))
    subprocess.run(["pulumi", "destroy", "--yes", "--non-interactive", "--stack",
                    str(values["STACK"])], cwd=project, env=env, capture_output=True,
                   timeout=1200, check=False)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def may(api: client.ApiClient, subject: str, verb: str, resource: tuple[str, str],
        namespace: str | None = None, name: str | None = None) -> bool:
    """Whether the ServiceAccount `subject` (`ServiceAccount:NS/NAME`) may, by the
    cluster's own SubjectAccessReview."""
    ns, name = subject.split(":", 1)[1].split("/")
    review = client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=f"system:serviceaccount:{ns}:{name}",
        groups=["system:serviceaccounts", f"system:serviceaccounts:{ns}",
                "system:authenticated"],
        resource_attributes=client.V1ResourceAttributes(
            verb=verb, group=resource[0], resource=resource[1], namespace=namespace,
            name=name)))
    return client.AuthorizationV1Api(api).create_subject_access_review(review).status.allowed


def test_step_1_gets_the_released_pulumi_cli_and_provider(world: World) -> None:
    world.run_through(r"pulumi plugin install")
    env = world.session.environment()
    released = pulumi_bin(world.lab.bin, "released")
    assert shutil.which("pulumi", path=env["PATH"]) == str(released / "pulumi")
    version = world.probe("pulumi", "version")
    assert version.stdout.strip() == "v3.276.0", version.stdout + version.stderr
    (plugin,) = Path(env["PULUMI_HOME"]).glob(
        "plugins/resource-kubernetes-v4.25.0/pulumi-resource-kubernetes")
    (as_released,) = pulumi_home(world.lab.bin, "released").glob(
        "plugins/resource-kubernetes-v*/pulumi-resource-kubernetes")
    (patched,) = pulumi_home(world.lab.bin, "patched").glob(
        "plugins/resource-kubernetes-v*/pulumi-resource-kubernetes")
    assert sha256(plugin) == sha256(as_released) != sha256(patched)
    # Pulumi as installed: nothing in its home turns its automatic log off.
    logs = Path(env["PULUMI_HOME"]) / "logs"
    assert not logs.is_file(), list(Path(env["PULUMI_HOME"]).iterdir())
    for setting in ("PULUMI_SKIP_CHECKPOINTS", "PULUMI_PARALLEL_DIFF"):
        assert setting not in env, setting


def test_steps_2_to_4_make_the_venv_the_stack_and_its_config(world: World) -> None:
    world.run_through(r"^pulumi stack init")
    env = world.session.environment()
    venv = world.project / ".venv" / "bin"
    assert env["PATH"].split(os.pathsep)[0] == str(venv)
    assert shutil.which("python", path=env["PATH"]) == str(venv / "python")
    config = world.probe("pulumi", "config", "--json")
    assert config.returncode == 0, config.stderr
    got = {k: v.get("objectValue", v.get("value")) for k, v in json.loads(config.stdout).items()}
    values = world.values
    assert got["knative-fleet:hub"] == {"kubeconfig": values["HUB_KUBECONFIG"],
                                        "context": values["HUB_CONTEXT"]}
    assert got["knative-fleet:providerFile"] == values["PROVIDER_FILE"]
    assert got["knative-fleet:releaseBase"] == values["RELEASE_BASE"]
    assert [e["name"] for e in got["knative-fleet:fleet"]] == [values["SPOKE"]]
    (group,) = got["knative-fleet:groups"]
    assert group["selector"] == {"matchLabels": {"env": "prod", "region": "eu"}}


def test_before_step_5_neither_identity_may_do_anything(world: World) -> None:
    """The hub identity the stack runs as is not an admin: before the section's rights
    are applied, a preview fails on the hub with the fix, and neither account may read
    the inventory or install anything."""
    preview = world.probe("pulumi", "preview", "--non-interactive")
    assert preview.returncode != 0
    out = preview.stdout + preview.stderr
    assert "ClusterProfileUnavailable" in out and "403" in out, out[-4000:]
    fleet = world.fleet
    hub = world.lab.hub.api()
    assert not may(hub, fleet.hub_subject, "list", CLUSTERPROFILES, fleet.namespace)
    for spoke in world.lab.spokes[:2]:
        assert not may(spoke.api(), fleet.spoke_subject, "create", ("apps", "deployments"),
                       SERVING, "controller")


def test_step_5_applies_the_rights_the_stack_needs_and_no_more(world: World) -> None:
    world.run_through(r"kubectl .*apply")
    fleet = world.fleet
    hub = world.lab.hub.api()
    assert may(hub, fleet.hub_subject, "list", CLUSTERPROFILES, fleet.namespace)
    assert not may(hub, fleet.hub_subject, "list", CLUSTERPROFILES, "fleet-system")
    assert not may(hub, fleet.hub_subject, "get", ("", "secrets"), fleet.namespace)
    for spoke in world.lab.spokes[:2]:
        api = spoke.api()
        # Writes are on the plan's names: the release's controller, never another.
        role = client.RbacAuthorizationV1Api(api).read_cluster_role(world.role)
        assert any("deployments" in r.resources and "create" in r.verbs
                   and "controller" in (r.resource_names or []) for r in role.rules), \
            [(r.resources, r.verbs, r.resource_names) for r in role.rules]
        assert not may(api, fleet.spoke_subject, "create", ("apps", "deployments"), SERVING)
        assert not may(api, fleet.spoke_subject, "delete", ("", "nodes"))
        assert not may(api, fleet.spoke_subject, "*", ("*", "*"))
        role = client.RbacAuthorizationV1Api(api).read_cluster_role(world.role)
        assert not any("*" in r.verbs or "*" in r.resources for r in role.rules)


def test_step_6_installs_on_the_selected_spokes_as_those_identities(world: World) -> None:
    out = world.run_through(r"^pulumi up")
    assert "eu-1" in out and "eu-2" in out, out[-4000:]
    s1, s2 = world.lab.spokes[:2]
    for api, namespace in ((s1.api(), SERVING), (s1.api(), EVENTING), (s2.api(), SERVING)):
        available = deployments_available(api, namespace)
        assert available and all(available.values()), (namespace, available)
    assert deployments_available(s2.api(), EVENTING) == {}  # the group installs Serving only
    outputs = world.probe("pulumi", "stack", "output", "spokes", "--json")
    spokes = json.loads(outputs.stdout)
    assert set(spokes) == {"eu-1", "eu-2"}, spokes  # us-1 is not selected
    assert all(s["ready"] is True for s in spokes.values()), spokes
    # The run reached the hub as the token kubeconfig, which holds no other user.
    users = yaml.safe_load(Path(str(world.values["HUB_KUBECONFIG"])).read_text())["users"]
    assert [list(u["user"]) for u in users] == [["token"]]


def test_a_second_preview_shows_no_change(world: World) -> None:
    preview = world.probe("pulumi", "preview", "--json", "--expect-no-changes",
                          "--non-interactive")
    assert preview.returncode == 0, preview.stdout[-4000:] + preview.stderr
    steps = json.loads(preview.stdout).get("steps", [])
    changed = sorted({(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps
                      if s["op"] not in ("same", "read")})
    assert steps and not changed, changed


def test_step_7_removes_everything_but_the_kept_crds_and_the_rights(world: World) -> None:
    world.run_through(r"^pulumi destroy")
    assert world.done == len(world.steps), \
        f"blocks the test did not run: {[b.line for b in world.steps[world.done:]]}"
    for spoke in world.lab.spokes[:2]:
        after = snapshot(spoke.api())
        leaked = after - world.before[spoke.name] - kept_by_policy(after)
        assert leaked == set(), (spoke.name, sorted(leaked)[:20])
        missing = world.before[spoke.name] - after
        assert missing == set(), (spoke.name, sorted(missing)[:20])
    roles = client.RbacAuthorizationV1Api(world.lab.hub.api()).list_namespaced_role(
        world.fleet.namespace).items
    assert [r.metadata.name for r in roles] == []
