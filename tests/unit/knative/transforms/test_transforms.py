"""The transform index (knative.transforms.TRANSFORMS): which transforms run, in which order."""

from __future__ import annotations

import inspect

from knative.transforms import TRANSFORMS
from models.component import ServingSpec
from models.registry import Registry
from tests.support.releases import find, serving


def _modules() -> list[str]:
    return [t.__module__.removeprefix("knative.transforms.") for t in TRANSFORMS]


def test_the_order_is_pinned() -> None:
    # The order is behaviour: registry before config, so that an explicit
    # config-deployment key wins over the registry's queue-proxy image; high-availability
    # before workloads, so that a workload's own replicas win over HA's; workloads before
    # controller_custom_certs, so that SSL_CERT_DIR follows the workload's env as in the
    # operator. default_broker_class and sink_binding_selection_mode last, as the
    # operator's KnativeEventing extra transformers (in that order) run after all common
    # ones: after config, so that the broker class goes into the config-br-defaults
    # `config` left; after workloads, so that the spec's mode wins over a workload's env.
    # The rest keeps the order the plan has always applied them in; changing it changes
    # what spokes get.
    assert _modules() == [
        "registry", "config", "ingress", "high_availability", "workloads",
        "controller_custom_certs", "services", "pod_disruption_budgets",
        "default_broker_class", "sink_binding_selection_mode"]


def test_every_transform_has_the_one_signature() -> None:
    for transform in TRANSFORMS:
        assert transform.__name__ == "transform"
        assert list(inspect.signature(transform).parameters) == ["rendered", "spec"]


def test_registry_before_config_lets_an_explicit_config_key_win() -> None:
    spec = ServingSpec(registry=Registry(override={"queue-proxy": "mirror/queue:1"}),
                       config={"deployment": {"queue-sidecar-image": "mine/queue:2"}})
    out = serving()
    for transform in TRANSFORMS:
        out = transform(out, spec)
    assert find(out, "ConfigMap", "config-deployment")["data"]["queue-sidecar-image"] == \
        "mine/queue:2"
    assert find(out, "Image", "queue-proxy")["spec"]["image"] == "mirror/queue:1"


def test_high_availability_before_workloads_lets_a_workloads_replicas_win() -> None:
    spec = ServingSpec.model_validate({"high-availability": {"replicas": 3},
                                       "workloads": [{"name": "controller", "replicas": 1}]})
    out = serving()
    for transform in TRANSFORMS:
        out = transform(out, spec)
    assert find(out, "Deployment", "controller")["spec"]["replicas"] == 1
    assert find(out, "Deployment", "autoscaler")["spec"]["replicas"] == 3


CONTROLLER_RELEASE_ENV = [
    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    {"name": "SYSTEM_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    {"name": "CONFIG_LOGGING_NAME", "value": "config-logging"},
    {"name": "CONFIG_OBSERVABILITY_NAME", "value": "config-observability"},
]


def controller_env(raw: dict) -> list[dict]:
    """The Serving controller container's env with every transform applied to `raw`."""
    spec = ServingSpec.model_validate(raw)
    out = serving()
    for transform in TRANSFORMS:
        out = transform(out, spec)
    return find(out, "Deployment", "controller")["spec"]["template"]["spec"][
        "containers"][0]["env"]


def test_workloads_before_custom_certs_puts_ssl_cert_dir_last_as_the_operator() -> None:
    # Operator: OverridesTransform merges the workload env (a known name in place, a new
    # one appended), then CustomCertsTransform appends SSL_CERT_DIR.
    assert controller_env({}) == CONTROLLER_RELEASE_ENV
    env = controller_env({
        "controller-custom-certs": {"type": "Secret", "name": "corp-ca"},
        "workloads": [{"name": "controller", "env": [{"container": "controller", "envVars": [
            {"name": "FLEET_REGION", "value": "eu-west"},
            {"name": "CONFIG_LOGGING_NAME", "value": "my-logging"},
            {"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]}]}]})
    assert env == [
        CONTROLLER_RELEASE_ENV[0],
        CONTROLLER_RELEASE_ENV[1],
        {"name": "CONFIG_LOGGING_NAME", "value": "my-logging"},
        CONTROLLER_RELEASE_ENV[3],
        {"name": "FLEET_REGION", "value": "eu-west"},
        {"name": "HTTPS_PROXY", "value": "http://proxy:3128"},
        {"name": "SSL_CERT_DIR", "value": "/custom-certs"},
    ]


def test_a_workloads_ssl_cert_dir_gives_way_to_the_custom_certs_one() -> None:
    # The operator would append a second SSL_CERT_DIR, and the last one wins.
    env = controller_env({
        "controller-custom-certs": {"type": "ConfigMap", "name": "corp-ca"},
        "workloads": [{"name": "controller", "env": [{"container": "controller", "envVars": [
            {"name": "SSL_CERT_DIR", "value": "/etc/mine"},
            {"name": "FLEET_REGION", "value": "eu-west"}]}]}]})
    assert env == [*CONTROLLER_RELEASE_ENV, {"name": "FLEET_REGION", "value": "eu-west"},
                   {"name": "SSL_CERT_DIR", "value": "/custom-certs"}]
