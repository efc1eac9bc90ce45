"""The transform index (knative.spec.TRANSFORMS): which transforms run, in which order."""

from __future__ import annotations

import inspect

from knative.spec import TRANSFORMS
from knative.spec.component import ServingSpec
from knative.spec.registry import Registry
from tests.support.releases import find, serving


def _modules() -> list[str]:
    return [t.__module__.removeprefix("knative.spec.") for t in TRANSFORMS]


def test_the_order_is_pinned() -> None:
    # The order is behaviour: registry before config, so that an explicit
    # config-deployment key wins over the registry's queue-proxy image; high-availability
    # before workloads, so that a workload's own replicas win over HA's. The rest keeps
    # the order the plan has always applied them in; changing it changes what spokes get.
    assert _modules() == [
        "registry", "config", "ingress", "controller_custom_certs", "default_broker_class",
        "sink_binding_selection_mode", "high_availability", "workloads", "services",
        "pod_disruption_budgets"]


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
