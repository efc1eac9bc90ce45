"""A fleet written from an operator user's KnativeServing / KnativeEventing specs
deploys with the same effect: every field shows on the live objects of its spoke,
and changing one field on one spoke previews exactly the objects it affects."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from core.resource_types import NAMESPACED_OBJECTS
from lab.fleet import FleetStack
from lab.handle import Lab
from review.held_objects import object_changes
from tests.support.fleet import deployments_available

pytestmark = pytest.mark.e2e
SPECS = Path(__file__).parent / "operator_specs"
SERVING, EVENTING = "knative-serving", "knative-eventing"


def operator_spec(name: str) -> dict:
    return yaml.safe_load((SPECS / name).read_text())["spec"]


def profile(name: str) -> dict:
    return {"name": name, "namespace": "fleet-system"}


@pytest.fixture(scope="module")
def world(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    extra = tmp_path_factory.mktemp("manifests") / "team.yaml"
    extra.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "team-settings", "namespace": SERVING}, "data": {"a": "b"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "config-features", "namespace": SERVING},
         "data": {"kubernetes.podspec-affinity": "enabled"}},
    ]))
    serving = operator_spec("knativeserving.yaml")
    serving["additionalManifests"] = [{"URL": f"file://{extra}"}]
    fleet = [
        {"name": "spoke-1", "clusterProfileRef": profile("spoke-1"), "serving": serving},
        {"name": "spoke-2", "clusterProfileRef": profile("spoke-2"),
         "eventing": operator_spec("knativeeventing.yaml")},
    ]
    stack = FleetStack(lab, f"t-spec-{uuid.uuid4().hex[:6]}", tmp_path_factory.mktemp("state"))
    stack.init()
    try:
        stack.configure(fleet)
        res = stack.up()
        assert res.ok, res.why
        yield {"stack": stack, "fleet": fleet, "s1": lab.spokes[0].api(),
               "s2": lab.spokes[1].api()}
    finally:
        stack.destroy()
        stack.remove()
        stack.cleanup()


def deployment(api: client.ApiClient, ns: str, name: str) -> client.V1Deployment:
    return client.AppsV1Api(api).read_namespaced_deployment(name, ns)


def container(dep: client.V1Deployment, name: str) -> client.V1Container:
    return next(c for c in dep.spec.template.spec.containers if c.name == name)


def configmap(api: client.ApiClient, ns: str, name: str) -> dict:
    return client.CoreV1Api(api).read_namespaced_config_map(name, ns).data or {}


def test_every_deployment_is_available(world: dict) -> None:
    serving = deployments_available(world["s1"], SERVING)
    eventing = deployments_available(world["s2"], EVENTING)
    assert serving and all(serving.values()), serving
    assert eventing and all(eventing.values()), eventing
    assert "github-webhook" in eventing  # source.github


def test_serving_config_registry_and_additional_manifests(world: dict) -> None:
    api = world["s1"]
    assert configmap(api, SERVING, "config-autoscaler")[
        "container-concurrency-target-default"] == "50"
    assert "_example" in configmap(api, SERVING, "config-autoscaler")  # release keys kept
    assert configmap(api, SERVING, "team-settings") == {"a": "b"}
    assert configmap(api, SERVING, "config-features") == {"kubernetes.podspec-affinity":
                                                           "enabled"}
    assert configmap(api, SERVING, "config-deployment")["queue-sidecar-image"] == \
        "registry.example.com/knative/queue-proxy:pinned"
    activator = deployment(api, SERVING, "activator")
    assert container(activator, "activator").image == \
        "registry.example.com/knative/activator:pinned"
    autoscaler = deployment(api, SERVING, "autoscaler")
    assert container(autoscaler, "autoscaler").image == \
        "registry.example.com/knative/autoscaler:v1.23.0"
    assert [s.name for s in autoscaler.spec.template.spec.image_pull_secrets] == ["regcred"]
    # ${NAME} is the release image's name (.../net-kourier/cmd/kourier), not the container's.
    assert container(deployment(api, SERVING, "net-kourier-controller"), "controller").image \
        == "registry.example.com/knative/kourier:v1.23.0"
    image = client.CustomObjectsApi(api).get_namespaced_custom_object(
        "caching.internal.knative.dev", "v1alpha1", SERVING, "images", "queue-proxy")
    assert image["spec"]["image"] == "registry.example.com/knative/queue-proxy:pinned"


def test_serving_high_availability_and_workloads(world: dict) -> None:
    api = world["s1"]
    assert deployment(api, SERVING, "autoscaler").spec.replicas == 2
    hpa = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler(
        "activator", SERVING)
    assert hpa.spec.min_replicas >= 2
    controller = deployment(api, SERVING, "controller")
    assert controller.spec.replicas == 1  # the workload's own replicas beat HA
    assert controller.metadata.labels["team"] == "platform"
    assert controller.spec.template.metadata.labels["team"] == "platform"
    assert controller.spec.template.metadata.annotations["fleet.example.com/owner"] == \
        "platform"
    pod = controller.spec.template.spec
    c = container(controller, "controller")
    assert c.resources.requests == {"cpu": "300m", "memory": "200Mi"}
    assert c.resources.limits["memory"] == "500Mi"
    assert {"name": "FLEET_REGION", "value": "eu-west"} in [
        {"name": e.name, "value": e.value} for e in c.env]
    assert pod.node_selector == {"kubernetes.io/os": "linux"}
    assert any(t.key == "dedicated" and t.effect == "NoSchedule" for t in pod.tolerations)
    assert pod.topology_spread_constraints[0].topology_key == "kubernetes.io/hostname"
    webhook = deployment(api, SERVING, "webhook")
    assert container(webhook, "webhook").readiness_probe.period_seconds == 7


def test_serving_services_pdbs_ingress_and_certs(world: dict) -> None:
    api = world["s1"]
    core = client.CoreV1Api(api)
    svc = core.read_namespaced_service("controller", SERVING)
    assert svc.metadata.labels["monitoring"] == "enabled"
    assert svc.metadata.annotations["prometheus.io/scrape"] == "true"
    pdb = client.PolicyV1Api(api).read_namespaced_pod_disruption_budget("activator-pdb", SERVING)
    assert pdb.spec.min_available == 1 and pdb.spec.max_unavailable is None
    kourier = core.read_namespaced_service("kourier", SERVING)
    assert kourier.spec.type == "NodePort"
    assert sorted(p.node_port for p in kourier.spec.ports) == [31080, 31443]
    assert configmap(api, SERVING, "config-network")["ingress-class"] == \
        "kourier.ingress.networking.knative.dev"
    controller = deployment(api, SERVING, "controller")
    volumes = {v.name: v for v in controller.spec.template.spec.volumes}
    assert volumes["custom-certs-corp-ca"].secret.secret_name == "corp-ca"
    env = {e.name: e.value for e in container(controller, "controller").env}
    assert env["SSL_CERT_DIR"] == "/custom-certs"
    # The operator's order: the workload's env, then SSL_CERT_DIR appended last.
    assert [e.name for e in container(controller, "controller").env][-2:] == [
        "FLEET_REGION", "SSL_CERT_DIR"]


def test_eventing_fields(world: dict) -> None:
    api = world["s2"]
    # spec.namespace (the operator's key): the namespace knative-fleet created has the label.
    assert client.CoreV1Api(api).read_namespace(EVENTING).metadata.labels["team"] == "platform"
    assert configmap(api, EVENTING, "config-logging")["loglevel.controller"] == "debug"
    broker = yaml.safe_load(configmap(api, EVENTING, "config-br-defaults")["default-br-config"])
    assert broker["clusterDefault"]["brokerClass"] == "Kafka"
    webhook = deployment(api, EVENTING, "eventing-webhook")
    env = {e.name: e.value for c in webhook.spec.template.spec.containers for e in c.env or []}
    assert env["SINK_BINDING_SELECTION_MODE"] == "inclusion"
    for name in ("eventing-controller", "github-webhook"):
        pods = deployment(api, EVENTING, name).spec.template.spec
        assert [s.name for s in pods.image_pull_secrets] == ["regcred"]
    github = client.AppsV1Api(api).read_namespaced_stateful_set(
        "github-controller-manager", EVENTING)
    assert [s.name for s in github.spec.template.spec.image_pull_secrets] == ["regcred"]
    assert deployment(api, EVENTING, "eventing-controller").spec.replicas == 2
    # HA 2 reaches broker-ingress-hpa (named unlike mt-broker-ingress); the workload's
    # replicas 1 cannot lower it, as in the operator.
    broker = client.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler(
        "broker-ingress-hpa", EVENTING)
    assert (broker.spec.min_replicas, broker.spec.max_replicas) == (2, 11)
    assert deployment(api, EVENTING, "eventing-controller").spec.template.metadata.annotations[
        "fleet.example.com/owner"] == "platform"
    pdb = client.PolicyV1Api(api).read_namespaced_pod_disruption_budget(
        "eventing-webhook", EVENTING)
    assert pdb.spec.max_unavailable == 1 and pdb.spec.min_available is None


def changed(steps: list[dict]) -> set[tuple[str, ...]]:
    """(type, resource name) of every step that changes something; of a step that holds
    objects (fleet.held_namespaced), with the object it changes (`Kind/namespace/name`)."""
    out: set[tuple[str, ...]] = set()
    for s in steps:
        if s.get("op") in ("same", "read"):
            continue
        typ, name = s["urn"].split("::")[2].rsplit("$", 1)[-1], s["urn"].rsplit("::", 1)[-1]
        held = object_changes(s.get("oldState") or {}, s.get("newState") or {}) \
            if typ == NAMESPACED_OBJECTS.type else ()
        out |= {(typ, name, f"{op} {key}") for op, key in held} or {(typ, name)}
    return out


@pytest.mark.parametrize(("spoke", "section", "edit", "expected"), [
    # The Service is held by Serving's namespaced-objects step: it changes that one.
    (0, "serving", lambda s: s["services"][0]["labels"].update(monitoring="off"),
     {(NAMESPACED_OBJECTS.type, "spoke-1:knative-serving/namespaced-objects",
       "updated Service/knative-serving/controller")}),
    (1, "eventing", lambda s: s.update(sinkBindingSelectionMode="exclusion"),
     {("kubernetes:apps/v1:Deployment", "spoke-2:knative-eventing/eventing-webhook")}),
    (1, "eventing", lambda s: s["config"]["logging"].update({"loglevel.webhook": "debug"}),
     {("kubernetes:core/v1:ConfigMap", "spoke-2:knative-eventing/config-logging")}),
])
def test_one_field_on_one_spoke_previews_exactly_its_objects(
        world: dict, spoke: int, section: str, edit: object, expected: set) -> None:
    stack: FleetStack = world["stack"]
    fleet = copy.deepcopy(world["fleet"])
    edit(fleet[spoke][section])  # type: ignore[operator]
    stack.configure(fleet)
    try:
        res, steps = stack.preview_steps()
        assert res.ok, res.why
        assert changed(steps) == expected, json.dumps(sorted(changed(steps)))
    finally:
        stack.configure(world["fleet"])
