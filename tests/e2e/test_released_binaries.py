"""The core lifecycle on the Pulumi CLI and Kubernetes provider exactly as released (what
a platform team runs; `toolchain/build.sh --test-tools` builds them from the same pins
without toolchain/patches/): install Serving and Eventing on two spokes, a no-op preview
that shows no change, a one-key config change that is an in-place update (uid kept),
a destroy that leaves nothing but the CRDs kept by policy, and the take-over of a spoke
the Knative Operator runs as the README's steps say, after which a preview shows no
change. Correctness must not need a patched binary.

The tests share one stack and run in file order."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from lab.fleet import FleetStack, entry
from lab.handle import Lab
from lab.operator import KnativeOperator, cr
from lab.toolchain import pulumi_bin, pulumi_home
from tests.support import parity
from tests.support.fleet import changed_spokes, deployments_available, module_stack
from tests.support.operator_lab import (
    SERVING,
    clean_spoke,
    fleet_entry,
    remove_knative_crds,
    spec,
    take_over,
)
from tests.support.snapshot import after_destroy, objects, snapshot

pytestmark = pytest.mark.e2e
CONFIG_MAP = ("knative-serving", "config-autoscaler")
ONE_KEY = {"autoscaler": {"enable-scale-to-zero": "false"}}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    spokes = lab.spokes[:2]
    before = {s.name: snapshot(s.api()) for s in spokes}
    with module_stack(lab, "released", tmp_path_factory.mktemp("state"),
                      binaries="released") as stack:
        yield {"stack": stack, "spokes": spokes, "before": before}


def fleet(config: dict | None = None) -> list[dict]:
    first = entry("spoke-1")
    if config:
        first["serving"]["config"] = config
    return [first, entry("spoke-2")]


def provider_plugin(home: Path) -> bytes:
    (plugin,) = home.glob("plugins/resource-kubernetes-v*/pulumi-resource-kubernetes")
    return hashlib.sha256(plugin.read_bytes()).digest()


def test_the_stack_runs_the_released_binaries(world: dict, lab: Lab) -> None:
    env = world["stack"].env
    cli = shutil.which("pulumi", path=env["PATH"])
    assert cli == str(pulumi_bin(lab.bin, "released") / "pulumi"), cli
    version = subprocess.run([cli, "version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == "v3.276.0", version.stdout + version.stderr
    assert env["PULUMI_HOME"] == str(pulumi_home(lab.bin, "released"))
    # Not the toolchain's patched provider: a plugin of its own, from the same pin.
    patched = pulumi_home(lab.bin, "patched")
    assert provider_plugin(Path(env["PULUMI_HOME"])) != provider_plugin(patched)


def test_install_serving_and_eventing_on_two_spokes(world: dict) -> None:
    stack: FleetStack = world["stack"]
    stack.configure(fleet())
    res = stack.up()
    assert res.ok, res.why
    outputs = stack.outputs()["spokes"]
    for spoke in world["spokes"]:
        assert outputs[spoke.name]["ready"] is True, outputs[spoke.name]
        for namespace in ("knative-serving", "knative-eventing"):
            available = deployments_available(spoke.api(), namespace)
            assert available and all(available.values()), (spoke.name, namespace, available)


def test_a_no_op_preview_shows_no_change(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert steps and all(s["op"] == "same" for s in steps), \
        sorted({(s["op"], s["urn"].rsplit("::", 1)[-1]) for s in steps if s["op"] != "same"})


def test_a_one_key_config_change_is_an_in_place_update(world: dict) -> None:
    stack: FleetStack = world["stack"]
    core = client.CoreV1Api(world["spokes"][0].api())
    uid = core.read_namespaced_config_map(CONFIG_MAP[1], CONFIG_MAP[0]).metadata.uid
    stack.configure(fleet(ONE_KEY))
    res, steps = stack.preview_steps()
    assert res.ok, res.why
    assert changed_spokes(steps) == {"spoke-1": {"update"}}, changed_spokes(steps)
    updated = [s["urn"].rsplit("::", 1)[-1] for s in steps if s["op"] == "update"
               and "spoke-1:" in s["urn"]]
    assert updated == [f"spoke-1:{CONFIG_MAP[0]}/{CONFIG_MAP[1]}"], updated
    res = stack.up()
    assert res.ok, res.why
    cm = core.read_namespaced_config_map(CONFIG_MAP[1], CONFIG_MAP[0])
    assert cm.metadata.uid == uid
    assert cm.data["enable-scale-to-zero"] == "false"
    res, steps = stack.preview_steps()
    assert res.ok and changed_spokes(steps) == {}, changed_spokes(steps)


def test_destroy_leaves_nothing_but_kept_crds(world: dict) -> None:
    stack: FleetStack = world["stack"]
    res = stack.destroy()
    assert res.ok, res.why
    for spoke in world["spokes"]:
        after, leaked = after_destroy(spoke.api(), world["before"][spoke.name])
        assert leaked == set(), (spoke.name, sorted(leaked)[:20])
        missing = world["before"][spoke.name] - after
        assert missing == set(), (spoke.name, sorted(missing)[:20])


def test_take_over_a_spoke_the_operator_runs(world: dict, lab: Lab,
                                             tmp_path: Path) -> None:
    """The README's take-over steps on the released binaries: the operator installs
    Serving on spoke-1, stops, releases its CR; knative-fleet adopts every object in
    place (uids kept), a refresh records what the spoke holds, and a preview then shows
    no change."""
    spoke = world["spokes"][0]
    api = spoke.api()
    version = spec("parity-knativeserving.yaml")["version"]
    serving = {"version": version, "ingress": {"kourier": {"enabled": True}}}
    eventing_version = spec("parity-knativeeventing.yaml")["version"]
    operator = KnativeOperator(spoke, lab.bin, lab.dir.root / "knative-operator-released.log")
    mirror = parity.mirror_from_kodata(operator.kodata, tmp_path / "releases", version,
                                       eventing_version)
    stack = FleetStack(lab, f"t-takeover-{uuid.uuid4().hex[:6]}", tmp_path / "state",
                       binaries="released")
    stack.init()
    try:
        clean_spoke(lab, api)
        remove_knative_crds(api)
        operator.install_crds(api)
        client.CoreV1Api(api).create_namespace({"metadata": {"name": SERVING}})
        operator.start()
        operator.apply(api, cr("KnativeServing", SERVING, serving))
        operator.wait_ready(api, "KnativeServing", SERVING, SERVING)
        stack.configure([])  # a stack that runs already: the take-over's preview is spoke-1's
        res = stack.up()
        assert res.ok, res.why
        before = {k: v["metadata"]["uid"] for k, v in objects(api).items()
                  if k[1] == SERVING}
        take_over(stack, api, operator, {"KnativeServing": SERVING},
                  [fleet_entry("spoke-1", serving)],
                  releaseBase=f"file://{mirror}")
        after = {k: v["metadata"]["uid"] for k, v in objects(api).items()}
        renewed = sorted(k for k, uid in before.items() if after.get(k) not in (None, uid))
        assert not renewed, f"objects created anew by the take-over: {renewed}"
        res = stack.run("refresh", "--yes", "--skip-preview")
        assert res.ok, res.why
        res, steps = stack.preview_steps()
        assert res.ok, res.why
        assert changed_spokes(steps) == {}, changed_spokes(steps)
    finally:
        operator.stop()
        stack.destroy()
        stack.remove()
        stack.cleanup()
        clean_spoke(lab, api)
