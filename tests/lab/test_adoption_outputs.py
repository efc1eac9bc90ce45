"""What a Pulumi write records is what it wrote, even when the write keeps the object's
generation. A Deployment's generation moves with its spec and annotations, a
StatefulSet's with its spec alone; neither moves with labels or owners. A provider
awaiter is first handed the namespace informer's cached copies, and after such a write
the copy from before it passed as current: the state held it, and the next preview showed
an update nobody made, as the operator take-over once did in CI for the one StatefulSet
of its install (toolchain/patches/pulumi-kubernetes/await-returns-the-written-version.patch).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from lab.handle import Lab
from lab.scratch import scratch_namespace
from lab.stack import Stack
from lab.wait import wait_for
from tests.support.exec_kubeconfig import exec_kubeconfig

pytestmark = pytest.mark.lab
PROGRAM = Path(__file__).parent / "adopt_program"
# Enough objects written at once that their awaiters subscribe to the namespace's
# informers while these still hold versions from before the writes (with the provider
# as released, 3 runs of 4 recorded stale copies: 25, 7 and 4 of the 40).
OBJECTS = {"Deployment": [f"d{i:02d}" for i in range(30)],
           "StatefulSet": [f"s{i:02d}" for i in range(10)]}
LABEL = "lab.knative-fleet.dev/adopted"
WRITTEN_BEFORE = {"pulumi.com/patchForce": "true"}
POD = {"metadata": {"labels": {"app": "NAME"}},
       "spec": {"containers": [{"name": "c", "image": "example.invalid/none:1"}]}}
SPECS = {"Deployment": {"replicas": 1, "selector": {"matchLabels": {"app": "NAME"}},
                        "template": POD},
         "StatefulSet": {"replicas": 1, "serviceName": "NAME",
                         "selector": {"matchLabels": {"app": "NAME"}}, "template": POD}}


def _spec(kind: str, name: str) -> dict:
    """SPECS[kind] as the program writes it for `name`."""
    return json.loads(json.dumps(SPECS[kind]).replace("NAME", name))


def _ready(obj: client.V1Deployment | client.V1StatefulSet) -> bool:
    if isinstance(obj, client.V1StatefulSet):
        return (obj.status.ready_replicas or 0) == obj.spec.replicas
    return any(c.type == "Available" and c.status == "True"
               for c in obj.status.conditions or [])


def test_adopting_running_workloads_records_what_was_written(
        lab: Lab, tmp_path: Path) -> None:
    spoke = lab.spokes[0]
    apps = client.AppsV1Api(spoke.api())
    core = client.CoreV1Api(spoke.api())
    namespace = scratch_namespace(spoke.api(), "adopt",
                                  [("apps", "deployments"), ("apps", "statefulsets")])
    # The patched provider: what this module proves is its patch (the released one is
    # the README's take-over step 5, a refresh, in test_operator_parity).
    stack = Stack(PROGRAM, "adopt", tmp_path / "state", lab.bin, binaries="patched")

    def live() -> list:
        return [*apps.list_namespaced_deployment(namespace).items,
                *apps.list_namespaced_stateful_set(namespace).items]
    try:
        create = {"Deployment": apps.create_namespaced_deployment,
                  "StatefulSet": apps.create_namespaced_stateful_set}
        for kind, names in OBJECTS.items():
            for name in names:
                create[kind](namespace, {"spec": _spec(kind, name), "metadata": {
                    "name": name, "annotations": WRITTEN_BEFORE}})
        count = sum(len(names) for names in OBJECTS.values())
        wait_for(lambda: len(items := live()) == count and all(map(_ready, items)),
                 timeout=180, what=f"{count} workloads ready in {namespace}")
        generations = {o.metadata.name: o.metadata.generation for o in live()}
        stack.init()
        stack.write_config(PROGRAM, {
            "lab-adopt:kubeconfig": exec_kubeconfig(lab, spoke.name),
            "lab-adopt:namespace": namespace, "lab-adopt:objects": OBJECTS,
            "lab-adopt:specs": SPECS, "lab-adopt:label": LABEL})
        res = stack.up()
        assert res.ok, res.why
        # The writes kept every generation, and each reached its object.
        assert {o.metadata.name: o.metadata.generation for o in live()} == generations
        assert all((o.metadata.labels or {}).get(LABEL) == "yes" for o in live())
        recorded = {r["outputs"]["metadata"]["name"]: r["outputs"]["metadata"]
                    for r in stack.export()["deployment"]["resources"]
                    if r["type"].startswith("kubernetes:apps/v1:")}
        assert sorted(recorded) == sorted(generations)
        stale = sorted(n for n, meta in recorded.items()
                       if (meta.get("labels") or {}).get(LABEL) != "yes")
        assert not stale, f"the state holds the version from before the write of: {stale}"
        res = stack.preview("--expect-no-changes")
        assert res.ok, res.why
        res = stack.destroy()
        assert res.ok, res.why
    finally:
        stack.config_file(PROGRAM).unlink(missing_ok=True)
        core.delete_namespace(namespace)
