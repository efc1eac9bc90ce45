"""`registry` (default / override / imagePullSecrets) against the real 1.23 releases."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative.manifests import Rendered
from knative.objects import pod_spec
from knative.transforms import registry as registry_key
from models.component import ComponentSpec
from models.registry import Registry
from tests.support.releases import eventing, find, serving

DEFAULT = "registry.example.com/knative/${NAME}:v1.23.0"


def apply_registry(rendered: Rendered, registry: Registry | None) -> Rendered:
    return registry_key.transform(rendered, ComponentSpec(registry=registry))


def container(rendered: Rendered, kind: str, name: str, container: str) -> dict:
    spec = pod_spec(find(rendered, kind, name))
    assert spec is not None
    return next(c for c in spec["containers"] if c["name"] == container)


def env(c: dict, name: str) -> dict:
    return next(e for e in c["env"] if e["name"] == name)


def workloads(rendered: Rendered) -> list[dict]:
    return [o for o in rendered.namespaced if pod_spec(o) is not None]


# ---------------------------------------------------------------------------- default


def mirrored(name: str) -> str:
    """DEFAULT with ${NAME} filled in."""
    return DEFAULT.replace("${NAME}", name)


# (kind, workload, container) -> the name the operator's getImageName takes from the
# release image: its last path element without tag or digest, not the container name.
SERVING_NAMES = {
    ("Deployment", "activator", "activator"): "activator",
    ("Deployment", "controller", "controller"): "controller",
    ("Deployment", "autoscaler-hpa", "autoscaler-hpa"): "autoscaler-hpa",
    ("Deployment", "net-kourier-controller", "controller"): "kourier",  # .../cmd/kourier
    ("Deployment", "3scale-kourier-gateway", "kourier-gateway"): "envoy",  # envoy:v1.37-…
    ("Job", "storage-version-migration-serving-serving-1.23.0", "migrate"): "migrate",
    ("Job", "cleanup-serving-serving-1.23.0", "cleanup"): "cleanup",
}
EVENTING_NAMES = {
    ("Deployment", "eventing-webhook", "eventing-webhook"): "webhook",  # .../cmd/webhook
    ("Deployment", "eventing-controller", "eventing-controller"): "controller",
    ("Deployment", "pingsource-mt-adapter", "dispatcher"): "mtping",
    ("Deployment", "imc-controller", "controller"): "channel_controller",
    ("Deployment", "imc-dispatcher", "dispatcher"): "channel_dispatcher",
    ("Deployment", "mt-broker-ingress", "ingress"): "ingress",
    ("Deployment", "mt-broker-filter", "filter"): "filter",
    ("Deployment", "mt-broker-controller", "mt-broker-controller"): "mtchannel_broker",
    ("Deployment", "job-sink", "job-sink"): "jobsink",
    ("StatefulSet", "request-reply", "request-reply"): "requestreply",
}


@pytest.mark.parametrize("rendered, names", [(serving, SERVING_NAMES),
                                             (eventing, EVENTING_NAMES)])
def test_default_names_each_container_by_its_release_image(
        rendered: object, names: dict[tuple[str, str, str], str]) -> None:
    base = rendered()  # type: ignore[operator]
    for (kind, workload, name), image in names.items():
        assert f"/{image}" in container(base, kind, workload, name)["image"]
    out = apply_registry(base, Registry(default=DEFAULT))
    for (kind, workload, name), image in names.items():
        assert container(out, kind, workload, name)["image"] == mirrored(image), workload


def test_default_rewrites_every_container() -> None:
    out = apply_registry(serving(), Registry(default=DEFAULT))
    assert workloads(out)
    for obj in workloads(out):
        for c in pod_spec(obj)["containers"]:
            assert c["image"].startswith("registry.example.com/knative/"), c["name"]
            assert c["image"].endswith(":v1.23.0") and "@" not in c["image"]


def test_image_name_is_the_operators_get_image_name() -> None:
    assert registry_key.image_name(
        "gcr.io/knative-releases/knative.dev/eventing/cmd/webhook@sha256:0123abcd") == "webhook"
    assert registry_key.image_name("docker.io/envoyproxy/envoy:v1.37-latest") == "envoy"
    assert registry_key.image_name("registry:5000/team/app:1@sha256:ab") == "app"
    assert registry_key.image_name("registry:5000/team/app") == "app"
    assert registry_key.image_name("ko://knative.dev/serving/cmd/queue") == "queue"
    assert registry_key.image_name("busybox:1.36") is None
    assert registry_key.image_name("") is None


def test_an_image_without_a_slash_goes_by_its_container_name() -> None:
    base = serving()
    container(base, "Deployment", "activator", "activator")["image"] = "activator-local:dev"
    out = apply_registry(base, Registry(default=DEFAULT))
    assert container(out, "Deployment", "activator", "activator")["image"] == \
        mirrored("activator")


def test_default_rewrites_the_caching_image_and_the_queue_sidecar_image() -> None:
    base = serving()
    assert "/serving/cmd/queue@sha256:" in find(base, "Image", "queue-proxy")["spec"]["image"]
    out = apply_registry(base, Registry(default=DEFAULT))
    # The caching Image is named queue-proxy; its image, .../serving/cmd/queue, says queue.
    assert find(out, "Image", "queue-proxy")["spec"]["image"] == mirrored("queue")
    assert find(out, "ConfigMap", "config-deployment")["data"]["queue-sidecar-image"] == \
        mirrored("queue")


def test_default_leaves_env_var_images_alone() -> None:
    before = container(eventing(), "Deployment", "imc-controller", "controller")
    out = apply_registry(eventing(), Registry(default=DEFAULT))
    after = container(out, "Deployment", "imc-controller", "controller")
    assert env(after, "DISPATCHER_IMAGE") == env(before, "DISPATCHER_IMAGE")
    assert after["image"] == mirrored("channel_controller")


# ---------------------------------------------------------------------------- override


def test_override_by_container_name_beats_default() -> None:
    out = apply_registry(serving(), Registry(default=DEFAULT,
                                             override={"activator": "mirror/activator:1"}))
    assert container(out, "Deployment", "activator", "activator")["image"] == "mirror/activator:1"
    assert (container(out, "Deployment", "webhook", "webhook")["image"]
            == "registry.example.com/knative/webhook:v1.23.0")


def test_override_keys_stay_container_names_when_the_image_name_differs() -> None:
    # The operator keys overrides by container (and workload/container), never by the
    # image's name: `mtping` is only what the default fills in.
    out = apply_registry(eventing(), Registry(default=DEFAULT, override={
        "pingsource-mt-adapter/dispatcher": "mirror/ping:1", "ingress": "mirror/in:1"}))
    assert container(out, "Deployment", "pingsource-mt-adapter", "dispatcher")["image"] == \
        "mirror/ping:1"
    assert container(out, "Deployment", "imc-dispatcher", "dispatcher")["image"] == \
        mirrored("channel_dispatcher")
    assert container(out, "Deployment", "mt-broker-ingress", "ingress")["image"] == \
        "mirror/in:1"
    with pytest.raises(TransformError, match="'mtping'"):
        apply_registry(eventing(), Registry(override={"mtping": "mirror/ping:1"}))


def test_workload_scoped_override_beats_container_name() -> None:
    # Serving's controller and Kourier's net-kourier-controller both have a container
    # named "controller"; the scoped key tells them apart.
    base = serving()
    gateway_before = container(base, "Deployment", "3scale-kourier-gateway",
                               "kourier-gateway")["image"]
    out = apply_registry(base, Registry(override={
        "controller": "mirror/serving-controller:1",
        "net-kourier-controller/controller": "mirror/kourier:1",
    }))
    assert (container(out, "Deployment", "controller", "controller")["image"]
            == "mirror/serving-controller:1")
    assert (container(out, "Deployment", "net-kourier-controller", "controller")["image"]
            == "mirror/kourier:1")
    # No default: everything not named keeps the release image.
    assert (container(out, "Deployment", "3scale-kourier-gateway", "kourier-gateway")["image"]
            == gateway_before)


def test_job_is_keyed_by_its_release_generate_name() -> None:
    base = serving()
    cleanup_before = container(base, "Job", "cleanup-serving-serving-1.23.0", "cleanup")["image"]
    out = apply_registry(base, Registry(override={
        "storage-version-migration-serving-/migrate": "mirror/migrate:1"}))
    assert (container(out, "Job", "storage-version-migration-serving-serving-1.23.0",
                      "migrate")["image"] == "mirror/migrate:1")
    assert container(out, "Job", "cleanup-serving-serving-1.23.0",
                     "cleanup")["image"] == cleanup_before


def test_queue_proxy_override_sets_caching_image_and_config_deployment() -> None:
    out = apply_registry(serving(), Registry(override={"queue-proxy": "mirror/queue:1"}))
    assert find(out, "Image", "queue-proxy")["spec"]["image"] == "mirror/queue:1"
    assert (find(out, "ConfigMap", "config-deployment")["data"]["queue-sidecar-image"]
            == "mirror/queue:1")


def test_env_var_override_by_env_name() -> None:
    out = apply_registry(eventing(), Registry(override={
        "DISPATCHER_IMAGE": "mirror/dispatcher:1",
        "APISERVER_RA_IMAGE": "mirror/ra:1",
    }))
    imc = container(out, "Deployment", "imc-controller", "controller")
    assert env(imc, "DISPATCHER_IMAGE") == {"name": "DISPATCHER_IMAGE",
                                            "value": "mirror/dispatcher:1"}
    ctrl = container(out, "Deployment", "eventing-controller", "eventing-controller")
    assert env(ctrl, "APISERVER_RA_IMAGE")["value"] == "mirror/ra:1"


def test_env_var_override_replaces_a_value_from() -> None:
    before = container(eventing(), "Deployment", "eventing-controller", "eventing-controller")
    assert "valueFrom" in env(before, "INTEGRATION_SOURCE_TIMER_IMAGE")
    out = apply_registry(eventing(), Registry(override={
        "INTEGRATION_SOURCE_TIMER_IMAGE": "mirror/timer:1"}))
    after = container(out, "Deployment", "eventing-controller", "eventing-controller")
    assert env(after, "INTEGRATION_SOURCE_TIMER_IMAGE") == {
        "name": "INTEGRATION_SOURCE_TIMER_IMAGE", "value": "mirror/timer:1"}


def test_init_containers_daemonsets_and_cronjobs_are_rewritten() -> None:
    base = serving()
    find(base, "Deployment", "controller")["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "setup", "image": "upstream/setup:1"}]
    base.namespaced.append({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-agent"},
        "spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "u/a:1"}]}}}})
    base.namespaced.append({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "gc"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "gc", "image": "u/gc:1"}]}}}}}})
    out = apply_registry(base, Registry(default=DEFAULT, override={"node-agent/agent": "m/a:2"},
                                        imagePullSecrets=[{"name": "pull"}]))
    controller = pod_spec(find(out, "Deployment", "controller"))
    assert controller["initContainers"][0]["image"] == mirrored("setup")
    daemon = pod_spec(find(out, "DaemonSet", "node-agent"))
    assert daemon["containers"][0]["image"] == "m/a:2"
    assert daemon["imagePullSecrets"] == [{"name": "pull"}]
    cron = pod_spec(find(out, "CronJob", "gc"))
    assert cron["containers"][0]["image"] == mirrored("gc")
    assert cron["imagePullSecrets"] == [{"name": "pull"}]


def test_unknown_override_key_is_refused_with_the_known_keys() -> None:
    with pytest.raises(TransformError) as err:
        apply_registry(serving(), Registry(override={"activater": "x/y:1",
                                                     "activator": "x/a:1"}))
    message = str(err.value)
    assert "'activater'" in message and "'activator'," not in message
    assert "activator" in message and "queue-proxy" in message
    assert "net-kourier-controller/controller" in message


def test_key_for_another_component_is_refused() -> None:
    with pytest.raises(TransformError, match="DISPATCHER_IMAGE"):
        apply_registry(serving(), Registry(override={"DISPATCHER_IMAGE": "x/d:1"}))


# ---------------------------------------------------------------------------- pull secrets


def test_image_pull_secrets_on_every_pod_spec_and_caching_image() -> None:
    out = apply_registry(eventing(), Registry(imagePullSecrets=[{"name": "mirror-pull"}]))
    for obj in workloads(out):
        assert pod_spec(obj)["imagePullSecrets"] == [{"name": "mirror-pull"}], obj["kind"]
    out = apply_registry(serving(), Registry(imagePullSecrets=[{"name": "mirror-pull"}]))
    assert find(out, "Image", "queue-proxy")["spec"]["imagePullSecrets"] == [
        {"name": "mirror-pull"}]


def test_image_pull_secrets_are_not_duplicated() -> None:
    base = serving()
    pod_spec(find(base, "Deployment", "activator"))["imagePullSecrets"] = [{"name": "own"},
                                                                           {"name": "a"}]
    registry = Registry(imagePullSecrets=[{"name": "a"}, {"name": "b"}])
    out = apply_registry(apply_registry(base, registry), registry)
    assert pod_spec(find(out, "Deployment", "activator"))["imagePullSecrets"] == [
        {"name": "own"}, {"name": "a"}, {"name": "b"}]
    assert pod_spec(find(out, "Deployment", "webhook"))["imagePullSecrets"] == [
        {"name": "a"}, {"name": "b"}]


def test_none_and_empty_registry_change_nothing() -> None:
    assert apply_registry(serving(), None) == serving()
    assert apply_registry(serving(), Registry()) == serving()


# ---------------------------------------------------------------------------- model


def test_model_accepts_operator_spelling() -> None:
    registry = Registry.model_validate({
        "default": DEFAULT,
        "override": {"activator": "a:1", "net-kourier-controller/controller": "k:1"},
        "imagePullSecrets": [{"name": "s"}],
    })
    assert registry.image_pull_secrets[0].name == "s"
    assert Registry(image_pull_secrets=[{"name": "s"}]).image_pull_secrets[0].name == "s"


@pytest.mark.parametrize("raw, fragment", [
    ({"default": "registry.example.com/knative/controller:v1"}, "${NAME}"),
    ({"override": {"a/b/c": "x:1"}}, "a/b/c"),
    ({"override": {"/c": "x:1"}}, "/c"),
    ({"override": {"activator": " "}}, "empty image"),
    ({"imagePullSecrets": [{}]}, "name"),
    ({"imagePullSecrets": ["secret"]}, "imagePullSecrets"),
    ({"imagePullSecret": [{"name": "s"}]}, "imagePullSecret"),
    ({"overrides": {"activator": "x:1"}}, "overrides"),
])
def test_model_refuses_bad_input(raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        Registry.model_validate(raw)
    assert fragment in str(err.value)


def test_default_without_name_says_what_name_becomes() -> None:
    with pytest.raises(ValidationError) as err:
        Registry.model_validate({"default": "registry.example.com/knative/all:v1"})
    assert "name of each release image" in str(err.value)
    assert "'webhook' for '.../eventing/cmd/webhook@sha256:...'" in str(err.value)
