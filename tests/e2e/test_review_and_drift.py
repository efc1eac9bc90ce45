"""The PR review report and the drift check on the lab, real engine: the report of a
new spoke, a no-op, a config change on one spoke, the reviewed change applied by a
`pulumi up` held to the review while a stack-file edit, a ClusterProfile relabel and a
release file changed after the review are each refused by that `up` with nothing
applied, a minor upgrade of two spokes, a removed spoke and an unreachable spoke, each
with its key lines; three hand edits on one spoke reported with spoke, object and field, and
two on CRDs its CRDs-first step holds (a label the fleet applied, a CRD deleted) and
two on objects its cluster-RBAC step holds (a ClusterRole's rules, a ClusterRoleBinding
deleted) and one its namespaced-objects step holds (a ServiceAccount deleted), repaired,
the untouched spoke clean.

The tests share one stack (Serving only: the reports need nothing more) in file order."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.paths import RELEASES, REPO
from lab.register import PROFILE_NAMESPACE
from lab.stack import Result
from tests.support.snapshot import HOLD, holds_left, moved, versions
from tests.support.topology import relabel

pytestmark = pytest.mark.e2e
ADDED = (b"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
         b"  name: added-after-review\n  namespace: knative-serving\n")
DOMAIN = "{{.Name}}.{{.Namespace}}.review.example"


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    stack = FleetStack(lab, f"t-review-{uuid.uuid4().hex[:6]}",
                       tmp_path_factory.mktemp("state"))
    stack.init()
    try:
        yield {"stack": stack, "out": tmp_path_factory.mktemp("review"),
               "s1": lab.spoke("spoke-1").api()}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()


def spoke(name: str, version: str = "1.22", **serving: object) -> dict:
    e = entry(name, serving=version, eventing=None)
    e["serving"].update(serving)
    return e


def run_tool(world: dict, module: str, *args: str) -> tuple[int, str, str]:
    """`python -m review|drift --stack <the stack>`, as CI runs it; (exit, stdout, out dir)."""
    out = world["out"] / f"{module}-{uuid.uuid4().hex[:4]}"
    stack = world["stack"]
    proc = subprocess.run(
        [sys.executable, "-m", module, "--stack", stack.stack, "--out", str(out), *args],
        cwd=REPO, env=stack.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout, str(out)


def review(world: dict, fleet: list[dict]) -> tuple[int, str, dict]:
    world["stack"].configure(fleet)
    code, printed, out = run_tool(world, "review")
    report = Path(out, "report.md").read_text()
    assert len(report) < 65_536
    return code, report, json.loads(Path(out, "report.json").read_text())


def up(world: dict) -> None:
    res = world["stack"].up()
    assert res.ok, res.why


def test_a_new_spoke(world: dict) -> None:
    world["stack"].configure([spoke("spoke-1")])
    up(world)
    code, report, data = review(world, [spoke("spoke-1"), spoke("spoke-2")])
    assert code == 0, report
    row = next(line for line in report.splitlines() if line.startswith("| spoke-2"))
    assert "none -> 1.22.1" in row, report
    assert not any(line.startswith("| spoke-1") for line in report.splitlines()), report
    up(world)


def test_a_no_op(world: dict) -> None:
    code, report, _ = review(world, [spoke("spoke-1"), spoke("spoke-2")])
    assert code == 0
    assert "no changes" in report.splitlines()[0], report


def test_a_config_change_on_one_spoke(world: dict) -> None:
    changed = spoke("spoke-1", config={"network": {"domain-template": DOMAIN}})
    code, report, _ = review(world, [changed, spoke("spoke-2")])
    assert code == 0, report
    assert "config-network" in report and DOMAIN in report, report
    assert "domain-template" in report, report
    assert "| spoke-1" in report and "| spoke-2" not in report, report


LABEL = "knative-fleet.test/review-group"


def reviewed_up(world: dict, report: Path) -> Result:
    """`pulumi up` held to the review, as `make apply REVIEWED=...` runs it."""
    stack = world["stack"]
    stack.env["KNATIVE_FLEET_REVIEWED"] = str(report)
    try:
        return stack.up()
    finally:
        del stack.env["KNATIVE_FLEET_REVIEWED"]


def named_under(out: str, part: str) -> set[str]:
    """The lines a reviewed `up`'s refusal indents under `planned otherwise than reviewed:
    <part>` (docs/review.md, "The reviewed change lands"): what in the part moved."""
    lines = out.splitlines()
    named = set()
    for i, line in enumerate(lines):
        if line.strip() != f"planned otherwise than reviewed: {part}":
            continue
        depth = len(line) - len(line.lstrip())
        for below in lines[i + 1:]:
            if len(below) - len(below.lstrip()) <= depth:
                break
            named.add(below.strip())
    return named


def domain(world: dict) -> str | None:
    network = client.CoreV1Api(world["s1"]).read_namespaced_config_map(
        "config-network", "knative-serving").data or {}
    return network.get("domain-template")


def test_the_reviewed_change_lands_and_what_changed_after_the_review_is_refused_by_the_up(
        world: dict, lab: Lab, tmp_path: Path) -> None:
    """The review records the program's plan; `pulumi up` held to it (KNATIVE_FLEET_REVIEWED)
    refuses, before it registers anything or takes its holds, each change made after the
    review, naming what moved: the stack file, a ClusterProfile's labels, a release file
    at the release base; then applies the reviewed plan, leaving no hold, and refuses a
    review of another stack."""
    mirror = tmp_path / "releases"
    shutil.copytree(RELEASES, mirror)
    group = {"name": "rv", "namespace": PROFILE_NAMESPACE,
             "selector": {"matchLabels": {LABEL: "yes"}}, "serving": {"version": "1.22"}}
    reviewed = [spoke("spoke-1", config={"network": {"domain-template": DOMAIN}}),
                spoke("spoke-2")]

    def configure(fleet: list[dict]) -> None:
        world["stack"].configure(fleet, groups=[group], releaseBase=f"file://{mirror}")

    # The rights for the release file as it will be changed below, applied before the
    # review (as a user applies the rights of every release the stack may run): a change
    # of the identity's rights is a change of the plan too.
    core = next(mirror.rglob("knative-v1.22.1/serving-core.yaml"))
    original = core.read_bytes()
    core.chmod(0o644)
    core.write_bytes(original + ADDED)
    configure(reviewed)
    core.write_bytes(original)
    configure(reviewed)
    code, printed, out = run_tool(world, "review")
    data = json.loads(Path(out, "report.json").read_text())
    assert code == 0, printed
    plan = data["plan"]
    assert plan["stack"] == data["stack"] == world["stack"].stack, plan
    assert plan["digest"].startswith("sha256:") and "spoke spoke-1" in plan["parts"], plan
    assert plan["digest"] in Path(out, "report.md").read_text()
    report = Path(out, "report.json")
    before = domain(world)
    history = len(world["stack"].history())
    apis = {name: lab.spoke(name).api() for name in ("spoke-1", "spoke-2")}

    def refused(why: str, named: dict[str, str]) -> None:
        """The reviewed `up` refused, naming under each part of `named` ({part: line})
        what moved there, with nothing written to any spoke: no object of the install
        and no hold (the stale review is refused before the run takes its holds)."""
        installed = {name: versions(api) for name, api in apis.items()}
        res = reviewed_up(world, report)
        assert not res.ok, res.out
        assert "plans other changes than the review" in res.out, (why, res.out)
        assert "nothing was registered or changed" in res.out, (why, res.out)
        for part, line in named.items():
            assert line in named_under(res.out, part), (why, part, line, res.out)
        for name, api in apis.items():
            now = versions(api)
            assert now == installed[name], (why, name, moved(installed[name], now))
            assert HOLD not in now, (why, name, "a hold Lease is on the spoke")
        assert domain(world) == before, why
        latest = world["stack"].history()[0]
        assert not {op: n for op, n in (latest.get("resourceChanges") or {}).items()
                    if op != "same" and n}, (why, latest)

    other = "{{.Name}}.{{.Namespace}}.pushed.example"
    configure([spoke("spoke-1", config={"network": {"domain-template": other}}),
               spoke("spoke-2")])
    refused("a stack file edited after the review",
            {"spoke spoke-1": "changed object: ConfigMap knative-serving/config-network"})
    configure(reviewed)

    relabel(lab, "spoke-2", {LABEL: "yes"})
    try:
        refused("a ClusterProfile relabelled after the review",
                {"the fleet's membership, waves or gates":
                 "changed: the membership: which ClusterProfiles are selected, and their labels"})
    finally:
        relabel(lab, "spoke-2", {LABEL: None})

    core.write_bytes(original + ADDED)
    try:
        added = "added object: ConfigMap knative-serving/added-after-review"
        refused("a release file changed at the release base after the review",
                {"spoke spoke-1": added, "spoke spoke-2": added})
    finally:
        core.write_bytes(original)

    assert len(world["stack"].history()) == history + 3
    applied = reviewed_up(world, report)
    assert applied.ok, applied.why
    assert "the reviewed plan (sha256:" in applied.out, applied.out
    assert domain(world) == DOMAIN
    assert holds_left(apis) == {}, "the reviewed up left its hold Lease on a spoke"
    wrong = tmp_path / "other-stack.json"
    wrong.write_text(json.dumps({**data, "stack": "another-stack"}))
    res = reviewed_up(world, wrong)
    assert not res.ok and "the review of stack 'another-stack'" in res.out, res.out
    world["stack"].configure(reviewed)
    up(world)


def test_a_minor_upgrade_of_two_spokes(world: dict) -> None:
    code, report, _ = review(world, [spoke("spoke-1", "1.23"), spoke("spoke-2", "1.23")])
    assert code == 0, report
    human = report.split("### Needs a human", 1)[1].split("\n### ", 1)[0]
    assert "Serving 1.22.1 -> 1.23.0" in human and "spoke-1" in human and "spoke-2" in human
    assert "CRD" in human, human
    # The roles and bindings the cluster-RBAC step holds, each named (their version label).
    assert "ClusterRole(s) and ClusterRoleBinding(s) updated" in human, human
    assert "ClusterRoleBinding/knative-serving-controller-admin" in human, human
    for name in ("spoke-1", "spoke-2"):
        row = next(line for line in report.splitlines() if line.startswith(f"| {name}"))
        assert "1.22.1 -> 1.23.0" in row, row


def test_a_removed_spoke(world: dict) -> None:
    code, report, _ = review(world, [spoke("spoke-1")])
    assert code == 0, report
    human = report.split("### Needs a human", 1)[1].split("\n### ", 1)[0]
    assert "Deletes" in human and "spoke-2" in human, human
    assert "Serving 1.22.1 -> none" in human, human


def test_an_unreachable_spoke(world: dict) -> None:
    gone = entry("spoke-9", profile="no-such-profile", eventing=None)
    code, report, data = review(world, [spoke("spoke-1"), spoke("spoke-2"), gone])
    assert code == 1, report
    human = report.split("### Needs a human", 1)[1]
    assert "spoke-9" in human and "ClusterProfileNotFound" in human, human


ADDED_KEY = "registries-skipping-tag-resolving"  # a key of config-deployment's own
# Held by Serving's cluster-RBAC step (fleet.held_rbac).
HELD_ROLE = "knative-serving-activator-cluster"
HELD_BINDING = "knative-serving-controller-admin"
# Held by Serving's namespaced-objects step (fleet.held_namespaced).
HELD_ACCOUNT = "controller"


def test_three_hand_edits_are_reported_and_repaired(world: dict) -> None:
    world["stack"].configure([spoke("spoke-1"), spoke("spoke-2")])
    code, printed, _ = run_tool(world, "drift")
    assert code == 0, printed
    core, apps = client.CoreV1Api(world["s1"]), client.AppsV1Api(world["s1"])
    # A key the fleet applied, changed; a key added beside it, which is no drift (README:
    # "nor a key added to a ConfigMap") and which the repair leaves.
    core.patch_namespaced_config_map("config-deployment", "knative-serving", {"data": {
        "queue-sidecar-image": "hand/edited:1", ADDED_KEY: "kind.local"}})
    apps.patch_namespaced_deployment_scale("autoscaler", "knative-serving",
                                           {"spec": {"replicas": 3}})
    core.delete_namespaced_config_map("config-features", "knative-serving")
    # Two CRDs, held by the CRDs-first step (no typed resource): a label the fleet applied
    # changed by hand, and a CRD deleted.
    ext = client.ApiextensionsV1Api(world["s1"])
    ext.patch_custom_resource_definition("services.serving.knative.dev", {
        "metadata": {"labels": {"app.kubernetes.io/version": "hand-edited"}}})
    ext.delete_custom_resource_definition("domainmappings.serving.knative.dev")
    # A ClusterRole and a ClusterRoleBinding held by the cluster-RBAC step (no typed
    # resource): the role's rules changed by hand, the binding deleted.
    rbac = client.RbacAuthorizationV1Api(world["s1"])
    rules = rbac.read_cluster_role(HELD_ROLE).rules
    rbac.patch_cluster_role(HELD_ROLE, {"rules": [{"apiGroups": [""], "resources": ["pods"],
                                                   "verbs": ["get"]}]})
    rbac.delete_cluster_role_binding(HELD_BINDING)
    # A ServiceAccount held by the namespaced-objects step, deleted.
    core.delete_namespaced_service_account(HELD_ACCOUNT, "knative-serving")
    code, printed, out = run_tool(world, "drift")
    assert code == 1, printed
    assert (f"ClusterRole {HELD_ROLE} changed: the fields the fleet applied" in printed
            and f"ClusterRoleBinding {HELD_BINDING} was deleted" in printed
            and f"ServiceAccount knative-serving/{HELD_ACCOUNT} was deleted" in printed
            ), printed
    assert ("spoke-1: 8 object(s) drifted" in printed
            and "CustomResourceDefinition services.serving.knative.dev changed: the fields "
                "the fleet applied" in printed
            and "CustomResourceDefinition domainmappings.serving.knative.dev was deleted"
                in printed
            and "ConfigMap knative-serving/config-features was deleted" in printed
            and "Deployment knative-serving/autoscaler changed: spec.replicas "
                "(applied 1, live 3)" in printed
            and "ConfigMap knative-serving/config-deployment changed: "
                "data.queue-sidecar-image" in printed), printed
    assert "spoke-2: no drift" in printed, printed
    assert ADDED_KEY not in printed, printed
    found = json.loads(Path(out, "drift.json").read_text())["drift"]
    assert {d["spoke"] for d in found} == {"spoke-1"} and len(found) == 8
    assert ADDED_KEY not in json.dumps(found)
    res = world["stack"].up("--refresh")
    assert res.ok, res.why
    code, printed, _ = run_tool(world, "drift")
    assert code == 0, printed
    data = core.read_namespaced_config_map("config-deployment", "knative-serving").data
    assert data["queue-sidecar-image"] != "hand/edited:1"
    assert data[ADDED_KEY] == "kind.local"
    labels = ext.read_custom_resource_definition("services.serving.knative.dev").metadata.labels
    assert labels["app.kubernetes.io/version"] != "hand-edited"
    assert ext.read_custom_resource_definition("domainmappings.serving.knative.dev")
    assert rbac.read_cluster_role(HELD_ROLE).rules == rules
    assert rbac.read_cluster_role_binding(HELD_BINDING).role_ref.name
    assert core.read_namespaced_service_account(HELD_ACCOUNT, "knative-serving").metadata.uid
