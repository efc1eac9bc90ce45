"""`high-availability` against the real 1.23 Serving and Eventing releases (operator
parity: HighAvailabilityTransform, pkg/reconciler/common/ha.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import ValidationError

from knative.manifests import Rendered
from knative.transforms import TRANSFORMS, high_availability
from knative.transforms import workloads as workloads_key
from models.component import ComponentSpec, EventingSpec
from models.high_availability import HighAvailability
from models.workloads import WorkloadOverride
from tests.support.releases import eventing, find, replicas, serving
from tests.support.releases import hpa_range as hpa


def apply_high_availability(rendered: Rendered, ha: HighAvailability | None, *,
                            workloads: Sequence[WorkloadOverride] = ()) -> Rendered:
    return high_availability.transform(
        rendered, ComponentSpec(high_availability=ha, workloads=list(workloads)))


def workload(**raw: Any) -> WorkloadOverride:
    return WorkloadOverride.model_validate(raw)


def test_ha_scales_serving_deployments_without_an_autoscaler() -> None:
    out = apply_high_availability(serving(), HighAvailability(replicas=3))
    for name in ("controller", "autoscaler", "autoscaler-hpa", "net-kourier-controller"):
        assert replicas(out, name) == 3, name
    # HPA-scaled: replicas stay with the HPA, whose floor rises (max by the same amount).
    for name in ("activator", "webhook", "3scale-kourier-gateway"):
        assert replicas(out, name) == replicas(serving(), name), name
    assert hpa(out, "activator") == (3, 22)
    assert hpa(out, "webhook") == (3, 7)
    assert hpa(out, "3scale-kourier-gateway") == (3, 12)


def test_ha_scales_eventing_but_not_pingsource_adapter_or_hpa_targets() -> None:
    out = apply_high_availability(eventing(), HighAvailability(replicas=2))
    for name in ("eventing-controller", "imc-controller", "imc-dispatcher",
                 "mt-broker-controller", "job-sink"):
        assert replicas(out, name) == 2, name
    assert replicas(out, "pingsource-mt-adapter") == 0
    for name in ("eventing-webhook", "mt-broker-ingress", "mt-broker-filter"):
        assert replicas(out, name) is None, name
    assert hpa(out, "eventing-webhook") == (2, 6)
    assert hpa(out, "broker-ingress-hpa") == (2, 11)
    assert hpa(out, "broker-filter-hpa") == (2, 11)
    # Only Deployments, as in the operator.
    assert replicas(out, "request-reply", "StatefulSet") == 1


def test_ha_keeps_hpas_that_already_have_more() -> None:
    base = serving()
    find(base, "HorizontalPodAutoscaler", "activator")["spec"]["minReplicas"] = 5
    out = apply_high_availability(base, HighAvailability(replicas=2))
    assert hpa(out, "activator") == (5, 20)
    assert hpa(out, "webhook") == (2, 6)


def test_ha_leaves_workloads_whose_override_sets_replicas() -> None:
    out = apply_high_availability(serving(), HighAvailability(replicas=3), workloads=[
        workload(name="controller", replicas=1), workload(name="activator", replicas=2),
        workload(name="autoscaler", labels={"a": "b"})])
    assert replicas(out, "controller") == replicas(serving(), "controller")
    assert hpa(out, "activator") == (1, 20)
    assert replicas(out, "autoscaler") == 3


def test_ha_leaves_workloads_whose_deprecated_deployments_entry_sets_replicas() -> None:
    spec = ComponentSpec.model_validate({
        "high-availability": {"replicas": 3},
        "deployments": [{"name": "controller", "replicas": 1},
                        {"name": "activator", "replicas": 2}]})
    out = high_availability.transform(serving(), spec)
    assert replicas(out, "controller") == replicas(serving(), "controller")
    assert hpa(out, "activator") == (1, 20)
    assert replicas(out, "autoscaler") == 3
    out = workloads_key.transform(out, spec)
    assert replicas(out, "controller") == 1
    assert hpa(out, "activator") == (2, 21)


def test_ha_then_overrides_lets_the_override_win() -> None:
    spec = ComponentSpec(high_availability=HighAvailability(replicas=3),
                         workloads=[workload(name="controller", replicas=1)])
    out = workloads_key.transform(high_availability.transform(serving(), spec), spec)
    assert replicas(out, "controller") == 1


def customized_eventing(**raw: Any) -> Rendered:
    """The 1.23 Eventing release with every transform of the index applied to `raw`."""
    spec = EventingSpec.model_validate(raw)
    out = eventing()
    for transform in TRANSFORMS:
        out = transform(out, spec)
    return out


def test_ha_floor_stays_on_an_hpa_named_unlike_its_workload() -> None:
    # The operator's numbers: HighAvailabilityTransform skips only objects named like the
    # workloads entry, so broker-ingress-hpa gets HA's 3 (max 10 + 2); the entry's 2,
    # applied after, only ever raises. The Deployment's replicas stay with the HPA.
    out = customized_eventing(**{"high-availability": {"replicas": 3},
                                 "workloads": [{"name": "mt-broker-ingress", "replicas": 2}]})
    assert hpa(out, "broker-ingress-hpa") == (3, 12)
    assert replicas(out, "mt-broker-ingress") is None
    assert hpa(out, "broker-filter-hpa") == (3, 12)
    assert replicas(out, "eventing-controller") == 3


def test_a_workloads_entry_above_ha_raises_the_differently_named_hpa_further() -> None:
    out = customized_eventing(**{"high-availability": {"replicas": 3},
                                 "workloads": [{"name": "mt-broker-ingress", "replicas": 5}]})
    assert hpa(out, "broker-ingress-hpa") == (5, 14)


def test_a_workloads_entry_wins_over_ha_on_an_hpa_named_like_its_workload() -> None:
    out = customized_eventing(**{"high-availability": {"replicas": 3},
                                 "workloads": [{"name": "eventing-webhook", "replicas": 2}]})
    assert hpa(out, "eventing-webhook") == (2, 6)
    assert hpa(out, "broker-ingress-hpa") == (3, 12)


def test_ha_none_changes_nothing() -> None:
    assert apply_high_availability(serving(), None) == serving()


def test_model_accepts_zero() -> None:
    assert HighAvailability.model_validate({"replicas": 0}).replicas == 0


@pytest.mark.parametrize("raw, fragment", [
    ({"replicas": -1}, "greater than or equal to 0"),
    ({}, "replicas"),
    ({"replicas": True}, "valid integer"),
    ({"replicas": 2, "enabled": True}, "enabled"),
])
def test_model_refuses_bad_input(raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        HighAvailability.model_validate(raw)
    assert fragment in str(err.value)
