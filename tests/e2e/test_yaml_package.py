"""The knative-fleet package from Pulumi YAML, end to end on the lab, real engine, the
released CLI and Kubernetes provider: the example of examples/yaml/ installs Serving and
Eventing on two spokes, a second preview is empty, a config change lands wave by wave,
another stack naming one of its spokes is refused as a Python stack is, a bad input is
reported as a stack file's is, and destroy leaves nothing behind.

The tests share one stack and run in file order."""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from lab.fleet import STACKS, FleetStack, entry, fleet_config
from lab.handle import Lab
from lab.yaml_stack import YamlFleetStack
from tests.support.fleet import changed_spokes, deployments_available
from tests.support.snapshot import holds_left, kept_by_policy, snapshot

pytestmark = pytest.mark.e2e
GROUP, VERSION, PLURAL = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles"
WAVE_LABEL = "knative-fleet-yaml-wave"
WAVES = {"waves": [{"name": "first", "selector": {"matchLabels": {WAVE_LABEL: "first"}}},
                   {"name": "rest"}]}


def label_profile(lab: Lab, name: str, value: str | None) -> None:
    client.CustomObjectsApi(lab.hub.api()).patch_namespaced_custom_object(
        GROUP, VERSION, "fleet-system", PLURAL, name,
        {"metadata": {"labels": {WAVE_LABEL: value}}})


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    state = tmp_path_factory.mktemp("state")
    stack = YamlFleetStack(lab, f"t-yaml-{uuid.uuid4().hex[:6]}", state)
    before = {s.name: snapshot(s.api()) for s in lab.spokes[:2]}
    label_profile(lab, "spoke-1", "first")
    stack.init()
    try:
        yield {"lab": lab, "stack": stack, "state": state, "before": before}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()
        label_profile(lab, "spoke-1", None)


def error_lines(out: str) -> set[str]:
    """Each problem of a fleet configuration error (`knative-fleet:PATH: message`), and
    its closing fix line, as the engine printed them (the component's host ends a
    component's error with `:` and the line that raised it)."""
    return {m.group(0).strip().removesuffix(":") for m in re.finditer(
        r"knative-fleet:[\w.\[\]]+: .*|Fix these keys in the stack config.*", out)}


def normalised(refusal: str, owner: str) -> str:
    """A refusal with the refused stack's own project, name and id left out: what
    differs between two refused stacks whatever their language."""
    refusal = re.sub(r"t-yaml(2|py)-[0-9a-f]{6}", "STACK", refusal)
    refusal = re.sub(r"organization/[\w-]+/", "organization/P/", refusal)
    return re.sub(r"kf-[0-9a-f]{32}", lambda m: m.group(0) if m.group(0) == owner else "ID",
                  refusal)


def update_line(out: str, pattern: str) -> int:
    """The number of the first line of `pulumi up` output that matches `pattern`."""
    return next(i for i, line in enumerate(out.splitlines()) if re.search(pattern, line))


def test_up_installs_serving_and_eventing_on_two_spokes(world: dict) -> None:
    stack: YamlFleetStack = world["stack"]
    stack.configure([entry("spoke-1"), entry("spoke-2")])
    res = stack.up()
    assert res.ok, res.why
    for spoke in world["lab"].spokes[:2]:
        for ns in ("knative-serving", "knative-eventing"):
            available = deployments_available(spoke.api(), ns)
            assert available and all(available.values()), (spoke.name, ns, available)
    assert holds_left({s.name: s.api() for s in world["lab"].spokes[:2]}) == {}
    outputs = stack.outputs()
    assert outputs["ownerId"].startswith("kf-")
    for name in ("spoke-1", "spoke-2"):
        spoke = outputs["spokes"][name]
        assert spoke["targetClusterResolved"]["status"] == "True", spoke
        assert spoke["ready"] is True and spoke["serving"] == "1.23.0", spoke
    # The fleet's resources are the component's children, typed as the program's.
    urns = [r["urn"] for r in stack.export()["deployment"]["resources"]]
    assert any(u.endswith("knative-fleet:index:Fleet$knative-fleet:index:Spoke::spoke-1")
               for u in urns), urns[:10]


def test_a_second_preview_is_empty(world: dict) -> None:
    stack: YamlFleetStack = world["stack"]
    res = stack.run("preview", "--json", "--expect-no-changes")
    assert res.ok, res.why
    doc = res.out[res.out.index("{"):]
    steps = __import__("json").loads(doc).get("steps", [])
    assert steps and changed_spokes(steps) == {}, changed_spokes(steps)


def test_a_config_change_lands_in_waves(world: dict) -> None:
    stack: YamlFleetStack = world["stack"]
    changed = {"version": "1.23", "config": {"autoscaler": {"max-scale": "7"}}}
    stack.configure([entry("spoke-1", serving=None) | {"serving": changed},
                     entry("spoke-2", serving=None) | {"serving": changed}], WAVES)
    res = stack.up()
    assert res.ok, res.why
    # The first wave's spoke changed, then its gate passed, then the rest changed.
    spoke_1 = update_line(res.out, r"spoke-1:knative-serving/config-autoscaler updated")
    gate = update_line(res.out, r"WaveGate wave-first created")
    spoke_2 = update_line(res.out, r"spoke-2:knative-serving/config-autoscaler updating")
    assert spoke_1 < gate < spoke_2, res.out[-4000:]
    outputs = stack.outputs()
    assert outputs["waves"]["first"]["spokes"] == ["spoke-1"], outputs["waves"]
    assert outputs["waves"]["rest"]["spokes"] == ["spoke-2"], outputs["waves"]
    assert {w["status"] for w in outputs["waves"].values()} == {"Completed"}, outputs["waves"]
    assert outputs["spokes"]["spoke-1"]["wave"] == "first"
    assert outputs["spokes"]["spoke-2"]["wave"] == "rest"
    for spoke in world["lab"].spokes[:2]:
        cm = client.CoreV1Api(spoke.api()).read_namespaced_config_map(
            "config-autoscaler", "knative-serving")
        assert cm.data["max-scale"] == "7", (spoke.name, cm.data)
    gates = [r["urn"] for r in stack.export()["deployment"]["resources"]
             if ":WaveGate::" in r["urn"]]
    assert gates, "no wave gate in the state"


def max_scale(spoke) -> str:
    cm = client.CoreV1Api(spoke.api()).read_namespaced_config_map(
        "config-autoscaler", "knative-serving")
    return cm.data["max-scale"]


def test_a_wave_that_needs_approval_waits_for_it(world: dict) -> None:
    """The first wave's change lands, the run stops before the wave that needs approval
    and fails naming it, nothing of that wave changes; the approved run applies it."""
    stack: YamlFleetStack = world["stack"]
    s1, s2 = world["lab"].spokes[:2]
    changed = {"version": "1.23", "config": {"autoscaler": {"max-scale": "8"}}}
    waves = {"waves": [WAVES["waves"][0], {"name": "rest", "approval": "Required"}]}
    stack.configure([entry("spoke-1", serving=None) | {"serving": changed},
                     entry("spoke-2", serving=None) | {"serving": changed}], waves)
    res = stack.up()
    assert not res.ok, res.out[-3000:]
    assert "wave 'rest' waits for approval" in res.out, res.why
    assert (max_scale(s1), max_scale(s2)) == ("8", "7")
    stack.env["KNATIVE_FLEET_APPROVE"] = "rest"
    try:
        res = stack.up()
    finally:
        del stack.env["KNATIVE_FLEET_APPROVE"]
    assert res.ok, res.why
    assert (max_scale(s1), max_scale(s2)) == ("8", "8")
    assert "rest" in stack.outputs()["approvals"]


def test_a_spoke_not_resolved_fails_the_run_and_the_rest_converge(world: dict) -> None:
    """A fleet entry whose ClusterProfile does not exist: the run fails naming it with
    the operator's reason, and the reachable spokes' change lands all the same."""
    stack: YamlFleetStack = world["stack"]
    s1, s2 = world["lab"].spokes[:2]
    changed = {"version": "1.23", "config": {"autoscaler": {"max-scale": "9"}}}
    stack.configure([entry("spoke-1", serving=None) | {"serving": changed},
                     entry("spoke-2", serving=None) | {"serving": changed},
                     entry("ghost")], WAVES)
    res = stack.up()
    assert not res.ok, res.out[-3000:]
    assert re.search(r"spoke 'ghost': ClusterProfileNotFound", res.out), res.why
    assert (max_scale(s1), max_scale(s2)) == ("9", "9")


def test_another_stack_naming_its_spoke_is_refused_as_a_python_stack_is(
        world: dict) -> None:
    lab: Lab = world["lab"]
    yaml2 = YamlFleetStack(lab, f"t-yaml2-{uuid.uuid4().hex[:6]}", world["state"])
    python = FleetStack(lab, f"t-yamlpy-{uuid.uuid4().hex[:6]}", world["state"])
    outs = {}
    try:
        for other in (yaml2, python):
            other.init()
            other.configure([entry("spoke-1")])
            res = other.preview()
            assert not res.ok, res.out[-3000:]
            outs[type(other).__name__] = res.out
    finally:
        for other in (yaml2, python):
            other.remove()
            other.cleanup()
    owner = world["stack"].outputs()["ownerId"]
    for out in outs.values():
        assert "SpokeOwnedByAnotherStack" in out and owner in out, out[-3000:]
    refusals = [sorted({normalised(m, owner) for m in re.findall(
        r"spoke 'spoke-1': SpokeOwnedByAnotherStack: [^\n]*", out)}) for out in outs.values()]
    assert refusals[0] and refusals[0] == refusals[1], "\n".join(
        difflib.ndiff(refusals[0], refusals[1]))


def test_a_bad_input_is_reported_as_a_stack_files_is(world: dict) -> None:
    lab: Lab = world["lab"]
    bad = [entry("spoke-1") | {"name": "Bad_Name"}]
    yaml2 = YamlFleetStack(lab, f"t-yaml3-{uuid.uuid4().hex[:6]}", world["state"])
    python = FleetStack(lab, f"t-yamlpy3-{uuid.uuid4().hex[:6]}", world["state"])
    lines = []
    try:
        yaml2.init()
        yaml2.configure(bad, admit_rights=False)
        python.init()
        python.write_config(STACKS, fleet_config(lab, bad))
        for other in (yaml2, python):
            res = other.preview()
            assert not res.ok, res.out[-3000:]
            lines.append(error_lines(res.out))
    finally:
        for other in (yaml2, python):
            other.remove()
            other.cleanup()
    assert "knative-fleet:fleet[0].name: spoke name must be a DNS-1123 label (a-z, 0-9, -), " \
        "got 'Bad_Name'" in lines[0], lines
    assert lines[1] and lines[0] == lines[1], lines


def test_destroy_leaves_nothing(world: dict) -> None:
    stack: YamlFleetStack = world["stack"]
    res = stack.destroy()
    assert res.ok, res.why
    for spoke in world["lab"].spokes[:2]:
        after = snapshot(spoke.api())
        leaked = after - world["before"][spoke.name] - kept_by_policy(after)
        assert leaked == set(), (spoke.name, sorted(leaked)[:20])
