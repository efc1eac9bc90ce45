"""The lab's chain, proven for real: upstream plugin -> token -> spoke API;
Pulumi engine -> kubernetes provider -> exec plugin -> spoke; and the
controllers that make a fake-node cluster behave like a real one."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from lab.handle import Lab
from lab.removal import delete_namespaces
from lab.scratch import scratch_namespace
from lab.stack import Stack
from lab.wait import wait_for
from tests.support.exec_kubeconfig import exec_kubeconfig, profile_cluster

pytestmark = pytest.mark.lab
SMOKE = Path(__file__).parent / "smoke_program"


def test_secretreader_token_reaches_the_spoke_with_least_privilege(lab: Lab) -> None:
    spoke = lab.spokes[0]
    cluster = profile_cluster(lab, spoke.name)
    exec_info = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                 "spec": {"interactive": False, "cluster": {
                     "server": cluster["server"],
                     "certificate-authority-data": cluster["certificate-authority-data"],
                     "config": cluster["extensions"][0]["extension"]}}}
    env = dict(os.environ, KUBECONFIG=lab.hub.kubeconfig,
               KUBERNETES_EXEC_INFO=json.dumps(exec_info))
    proc = subprocess.run([str(lab.bin / "secretreader")], env=env, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    token = json.loads(proc.stdout)["status"]["token"]
    cfg = client.Configuration()
    cfg.host = cluster["server"]
    cfg.api_key = {"authorization": f"Bearer {token}"}
    ca = Path(lab.raw["hub"]["kubeconfig"]).parent / f"{spoke.name}-ca.crt"
    import base64
    ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    cfg.ssl_ca_cert = str(ca)
    namespaces = client.CoreV1Api(client.ApiClient(cfg)).list_namespace().items
    assert any(ns.metadata.name == "kube-system" for ns in namespaces)
    # The token's identity holds the ClusterRole knative-fleet's plans need, not
    # cluster-admin, and the spoke enforces it.
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(client.ApiClient(cfg)).list_node()
    assert err.value.status == 403
    # A wrong token is refused: the token really is what authenticates.
    cfg.api_key = {"authorization": "Bearer not-a-token"}
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(client.ApiClient(cfg)).list_namespace()
    assert err.value.status == 401


def test_pulumi_configmap_lifecycle_through_exec_plugin(lab: Lab, tmp_path: Path) -> None:
    spoke = lab.spokes[0]
    stack = Stack(SMOKE, "smoke", tmp_path / "state", lab.bin)
    stack.init()
    core = client.CoreV1Api(spoke.api())
    name = scratch_namespace(spoke.api(), "smoke", [("", "configmaps")])
    try:
        for value in ("one", "two"):
            stack.write_config(SMOKE, {"lab-smoke:kubeconfig": exec_kubeconfig(lab, spoke.name),
                                       "lab-smoke:name": name, "lab-smoke:value": value})
            res = stack.up()
            assert res.ok, res.why
            assert core.read_namespaced_config_map(name, name).data == {"value": value}
        res = stack.destroy()
        assert res.ok, res.why
        with pytest.raises(ApiException) as err:
            core.read_namespaced_config_map(name, name)
        assert err.value.status == 404
    finally:
        stack.config_file(SMOKE).unlink(missing_ok=True)
        delete_namespaces(spoke.api(), [name])


def test_deployment_becomes_available(lab: Lab) -> None:
    api = lab.spokes[0].api()
    apps = client.AppsV1Api(api)
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    labels = {"app": name}
    apps.create_namespaced_deployment("default", {
        "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "example.invalid/none:1"}]}}},
    })
    try:
        def available() -> bool:
            st = apps.read_namespaced_deployment(name, "default").status
            conds = {c.type: c.status for c in (st.conditions or [])}
            return conds.get("Available") == "True" and (st.ready_replicas or 0) == 2
        wait_for(available, timeout=90, what=f"Deployment {name} Available")
    finally:
        apps.delete_namespaced_deployment(name, "default")


def test_namespace_deletion_completes(lab: Lab) -> None:
    core = client.CoreV1Api(lab.spokes[0].api())
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, {"metadata": {"name": "x"}, "data": {"a": "b"}})
    core.delete_namespace(name)

    def gone() -> bool:
        try:
            core.read_namespace(name)
            return False
        except ApiException as exc:
            return exc.status == 404
    wait_for(gone, timeout=90, what=f"namespace {name} deleted")


def test_owned_object_is_garbage_collected(lab: Lab) -> None:
    core = client.CoreV1Api(lab.spokes[0].api())
    owner_name = f"owner-{uuid.uuid4().hex[:6]}"
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": owner_name}})
    core.create_namespaced_secret("default", {"metadata": {
        "name": f"{owner_name}-dep",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner_name,
                             "uid": owner.metadata.uid, "controller": True,
                             "blockOwnerDeletion": True}]}})
    core.delete_namespaced_config_map(owner_name, "default")

    def collected() -> bool:
        try:
            core.read_namespaced_secret(f"{owner_name}-dep", "default")
            return False
        except ApiException as exc:
            return exc.status == 404
    wait_for(collected, timeout=90, what=f"{owner_name}-dep garbage-collected")


def test_lab_json_describes_every_cluster(lab: Lab) -> None:
    assert {"hub", "spokes", "providerFile", "bin"} <= set(lab.raw)
    assert len(lab.spokes) == 2
    for cluster in (lab.hub, *lab.spokes):
        server = yaml.safe_load(Path(cluster.kubeconfig).read_text())["clusters"][0]["cluster"]
        assert server["server"].startswith("https://127.0.0.1:")
    providers = json.loads(Path(lab.provider_file).read_text())
    assert providers["providers"][0]["name"] == "secretreader"
