"""`high-availability`, `workloads`, `services` and `podDisruptionBudgets` against the
real 1.23 Serving and Eventing releases."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from knative import manifests, releases
from knative.spec.registry import pod_spec
from knative.spec.workloads import (
    HighAvailability,
    PodDisruptionBudgetOverride,
    ServiceOverride,
    WorkloadOverride,
    apply_high_availability,
    apply_pdb_overrides,
    apply_service_overrides,
    apply_workload_overrides,
)
from lab.paths import RELEASES

MIGRATE_SERVING = "storage-version-migration-serving-serving-1.23.0"


@functools.lru_cache(maxsize=2)  # one per component
def _rendered(component: str) -> manifests.Rendered:
    docs: list[dict] = []
    for url in releases.release_urls(f"file://{RELEASES}", component, "1.23.0"):
        docs.extend(releases.load_documents(url))
    return manifests.render(docs, namespace=f"knative-{component}",
                            cr_name=f"knative-{component}", component=component)


def serving() -> manifests.Rendered:
    return copy.deepcopy(_rendered("serving"))


def eventing() -> manifests.Rendered:
    return copy.deepcopy(_rendered("eventing"))


def find(rendered: manifests.Rendered, kind: str, name: str) -> dict:
    return next(o for o in rendered.namespaced
                if o["kind"] == kind and o["metadata"]["name"] == name)


def replicas(rendered: manifests.Rendered, name: str, kind: str = "Deployment") -> Any:
    return find(rendered, kind, name)["spec"].get("replicas")


def hpa(rendered: manifests.Rendered, name: str) -> tuple[int, int]:
    spec = find(rendered, "HorizontalPodAutoscaler", name)["spec"]
    return spec["minReplicas"], spec["maxReplicas"]


def container(rendered: manifests.Rendered, kind: str, name: str, container: str) -> dict:
    spec = pod_spec(find(rendered, kind, name))
    assert spec is not None
    return next(c for c in spec["containers"] if c["name"] == container)


def workload(**raw: Any) -> WorkloadOverride:
    return WorkloadOverride.model_validate(raw)


# ---------------------------------------------------------------------------- high availability


def test_ha_scales_serving_deployments_without_an_autoscaler() -> None:
    out = apply_high_availability(serving(), HighAvailability(replicas=3))
    for name in ("controller", "autoscaler", "autoscaler-hpa", "net-kourier-controller"):
        assert replicas(out, name) == 3, name
    # HPA-scaled: replicas stay with the HPA, whose floor rises (max by the same amount).
    for name in ("activator", "webhook", "3scale-kourier-gateway"):
        assert replicas(out, name) == replicas(_rendered("serving"), name), name
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
    assert replicas(out, "controller") == replicas(_rendered("serving"), "controller")
    assert hpa(out, "activator") == (1, 20)
    assert replicas(out, "autoscaler") == 3


def test_ha_then_overrides_lets_the_override_win() -> None:
    out = apply_high_availability(serving(), HighAvailability(replicas=3))
    out = apply_workload_overrides(out, [workload(name="controller", replicas=1)])
    assert replicas(out, "controller") == 1


def test_ha_none_changes_nothing() -> None:
    assert apply_high_availability(serving(), None) == _rendered("serving")


# ---------------------------------------------------------------------------- workloads: replicas


def test_replicas_on_deployment_and_statefulset() -> None:
    out = apply_workload_overrides(serving(), [workload(name="controller", replicas=4)])
    assert replicas(out, "controller") == 4
    out = apply_workload_overrides(eventing(), [workload(name="request-reply", replicas=3)])
    assert replicas(out, "request-reply", "StatefulSet") == 3


def test_replicas_of_an_hpa_scaled_deployment_go_to_its_hpa() -> None:
    out = apply_workload_overrides(serving(), [workload(name="activator", replicas=4)])
    assert replicas(out, "activator") is None
    assert hpa(out, "activator") == (4, 23)
    out = apply_workload_overrides(eventing(), [workload(name="mt-broker-ingress", replicas=3)])
    assert hpa(out, "broker-ingress-hpa") == (3, 12)
    assert hpa(out, "broker-filter-hpa") == (1, 10)


def test_replicas_zero_on_hpa_scaled_deployment_is_refused() -> None:
    with pytest.raises(TransformError, match="activator.*HPA"):
        apply_workload_overrides(serving(), [workload(name="activator", replicas=0)])


def test_replicas_on_a_job_is_refused() -> None:
    with pytest.raises(TransformError, match="Job"):
        apply_workload_overrides(serving(), [workload(name=MIGRATE_SERVING, replicas=2)])


# ---------------------------------------------------------------------------- workloads: metadata


def test_labels_and_annotations_on_workload_and_pod_template() -> None:
    before = find(serving(), "Deployment", "activator")
    out = apply_workload_overrides(serving(), [workload(
        name="activator", labels={"team": "platform"},
        annotations={"sidecar.istio.io/inject": "true"})])
    activator = find(out, "Deployment", "activator")
    template = activator["spec"]["template"]["metadata"]
    for meta in (activator["metadata"], template):
        assert meta["labels"]["team"] == "platform"
        assert meta["annotations"]["sidecar.istio.io/inject"] == "true"
    assert template["labels"]["app"] == "activator"  # release labels kept
    assert activator["spec"]["selector"] == before["spec"]["selector"]


def test_label_that_would_break_the_selector_is_refused() -> None:
    with pytest.raises(TransformError, match="selector needs app='activator'"):
        apply_workload_overrides(serving(), [workload(name="activator",
                                                      labels={"app": "other"})])
    # The same value is harmless.
    apply_workload_overrides(serving(), [workload(name="activator", labels={"app": "activator"})])


def test_job_matched_by_generate_name_or_exact_name() -> None:
    out = apply_workload_overrides(serving(), [
        workload(name="storage-version-migration-serving-", labels={"batch": "true"}),
        workload(name="cleanup-serving-serving-1.23.0", annotations={"a": "b"})])
    migrate = find(out, "Job", MIGRATE_SERVING)
    assert migrate["metadata"]["labels"]["batch"] == "true"
    assert migrate["spec"]["template"]["metadata"]["labels"]["batch"] == "true"
    assert find(out, "Job", "cleanup-serving-serving-1.23.0")["metadata"]["annotations"]["a"] == "b"
    assert "batch" not in find(out, "Job", "cleanup-serving-serving-1.23.0")["metadata"]["labels"]


def test_generate_name_prefix_only_matches_jobs() -> None:
    with pytest.raises(TransformError, match="'activ-'"):
        apply_workload_overrides(serving(), [workload(name="activ-", labels={"a": "b"})])


def test_daemonset_is_matched_by_name() -> None:
    base = serving()
    base.namespaced.append({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "agent", "image": "a:1"}]}}}})
    out = apply_workload_overrides(base, [workload(name="agent", nodeSelector={"k": "v"})])
    assert pod_spec(find(out, "DaemonSet", "agent"))["nodeSelector"] == {"k": "v"}
    with pytest.raises(TransformError, match="DaemonSet"):
        apply_workload_overrides(base, [workload(name="agent", replicas=2)])


# ---------------------------------------------------------------------------- workloads: pod spec


def test_scheduling_fields_replace_the_release_values() -> None:
    toleration = {"key": "knative", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["system"]}]}]}}}
    spread = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
              "whenUnsatisfiable": "ScheduleAnyway",
              "labelSelector": {"matchLabels": {"app": "activator"}}}
    before = pod_spec(find(serving(), "Deployment", "activator"))
    assert before["affinity"] != affinity
    out = apply_workload_overrides(serving(), [workload(
        name="activator", nodeSelector={"pool": "system"}, tolerations=[toleration],
        affinity=affinity, topologySpreadConstraints=[spread])])
    spec = pod_spec(find(out, "Deployment", "activator"))
    assert spec["nodeSelector"] == {"pool": "system"}
    assert spec["tolerations"] == [toleration]
    assert spec["affinity"] == affinity
    assert spec["topologySpreadConstraints"] == [spread]


def test_host_network_sets_the_matching_dns_policy() -> None:
    out = apply_workload_overrides(serving(), [workload(name="3scale-kourier-gateway",
                                                        hostNetwork=True)])
    spec = pod_spec(find(out, "Deployment", "3scale-kourier-gateway"))
    assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    out = apply_workload_overrides(serving(), [workload(name="controller", hostNetwork=False)])
    spec = pod_spec(find(out, "Deployment", "controller"))
    assert spec["hostNetwork"] is False and "dnsPolicy" not in spec


def test_resources_merge_per_key() -> None:
    out = apply_workload_overrides(serving(), [workload(name="activator", resources=[
        {"container": "activator", "requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}])])
    assert container(out, "Deployment", "activator", "activator")["resources"] == {
        "requests": {"cpu": "500m", "memory": "60Mi"},
        "limits": {"cpu": "1000m", "memory": "1Gi"}}
    # eventing-controller ships requests only: limits are added.
    out = apply_workload_overrides(eventing(), [workload(name="eventing-controller", resources=[
        {"container": "eventing-controller", "limits": {"cpu": 1, "memory": "512Mi"}}])])
    assert container(out, "Deployment", "eventing-controller",
                     "eventing-controller")["resources"] == {
        "requests": {"cpu": "100m", "memory": "100Mi"},
        "limits": {"cpu": "1", "memory": "512Mi"}}


def test_env_replaces_by_name_and_appends_new_vars() -> None:
    before = container(serving(), "Deployment", "controller", "controller")["env"]
    out = apply_workload_overrides(serving(), [workload(name="controller", env=[
        {"container": "controller", "envVars": [
            {"name": "SYSTEM_NAMESPACE", "value": "elsewhere"},
            {"name": "EXTRA", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}])])
    after = container(out, "Deployment", "controller", "controller")["env"]
    assert [e["name"] for e in after] == [e["name"] for e in before] + ["EXTRA"]
    assert next(e for e in after if e["name"] == "SYSTEM_NAMESPACE") == {
        "name": "SYSTEM_NAMESPACE", "value": "elsewhere"}
    assert after[-1] == {"name": "EXTRA",
                         "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


def test_probe_timings_merge_and_keep_the_handler() -> None:
    before = container(serving(), "Deployment", "activator", "activator")
    out = apply_workload_overrides(serving(), [workload(
        name="activator",
        readinessProbes=[{"container": "activator", "periodSeconds": 7, "failureThreshold": 9}],
        livenessProbes=[{"container": "activator", "initialDelaySeconds": 30}])])
    after = container(out, "Deployment", "activator", "activator")
    assert after["readinessProbe"] == {**before["readinessProbe"], "periodSeconds": 7,
                                       "failureThreshold": 9}
    assert after["livenessProbe"] == {**before["livenessProbe"], "initialDelaySeconds": 30}


def test_empty_probe_override_removes_the_probe() -> None:
    out = apply_workload_overrides(serving(), [workload(
        name="activator", livenessProbes=[{"container": "activator"}])])
    after = container(out, "Deployment", "activator", "activator")
    assert "livenessProbe" not in after and "readinessProbe" in after


def test_probe_override_without_a_release_probe_is_refused() -> None:
    with pytest.raises(TransformError, match="no readinessProbe"):
        apply_workload_overrides(eventing(), [workload(
            name="request-reply",
            readinessProbes=[{"container": "request-reply", "periodSeconds": 5}])])


# ---------------------------------------------------------------------------- workloads: errors


def test_unknown_workload_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        apply_workload_overrides(serving(), [workload(name="activater", replicas=2)])
    message = str(err.value)
    assert "'activater'" in message
    assert "activator" in message and "net-kourier-controller" in message
    assert MIGRATE_SERVING in message


def test_unknown_container_is_refused_with_the_known_containers() -> None:
    for field, item in (
        ("resources", {"container": "controler", "limits": {"cpu": "1"}}),
        ("env", {"container": "controler", "envVars": [{"name": "A", "value": "b"}]}),
        ("readinessProbes", {"container": "controler", "periodSeconds": 3}),
        ("livenessProbes", {"container": "controler", "periodSeconds": 3}),
    ):
        with pytest.raises(TransformError) as err:
            apply_workload_overrides(serving(), [workload(name="net-kourier-controller",
                                                          **{field: [item]})])
        assert "'controler'" in str(err.value) and "known: controller" in str(err.value), field


def test_no_overrides_change_nothing() -> None:
    assert apply_workload_overrides(serving(), None) == _rendered("serving")
    assert apply_workload_overrides(serving(), []) == _rendered("serving")


# ---------------------------------------------------------------------------- services


def test_service_labels_annotations_and_selector_merge() -> None:
    out = apply_service_overrides(serving(), [ServiceOverride(
        name="activator-service", labels={"team": "x"},
        annotations={"prometheus.io/scrape": "true"}, selector={"role": "activator"})])
    service = find(out, "Service", "activator-service")
    assert service["metadata"]["labels"]["team"] == "x"
    assert service["metadata"]["labels"][manifests.CR_NAME_LABEL] == "knative-serving"
    assert service["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert service["spec"]["selector"] == {"app": "activator", "role": "activator"}


def test_service_override_on_eventing() -> None:
    out = apply_service_overrides(eventing(), [ServiceOverride(
        name="broker-ingress", annotations={"a": "b"})])
    assert find(out, "Service", "broker-ingress")["metadata"]["annotations"] == {
        "a": "b", "pulumi.com/skipAwait": "true"}


def test_unknown_service_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        apply_service_overrides(serving(), [ServiceOverride(name="activator", labels={"a": "b"})])
    assert "'activator'" in str(err.value) and "activator-service" in str(err.value)
    assert apply_service_overrides(serving(), None) == _rendered("serving")


# ---------------------------------------------------------------- pod disruption budgets


def test_pdb_min_available() -> None:
    out = apply_pdb_overrides(serving(), [PodDisruptionBudgetOverride(
        name="activator-pdb", minAvailable=1)])
    spec = find(out, "PodDisruptionBudget", "activator-pdb")["spec"]
    assert spec["minAvailable"] == 1 and "maxUnavailable" not in spec
    assert spec["selector"] == {"matchLabels": {"app": "activator"}}


def test_pdb_max_unavailable_replaces_min_available() -> None:
    out = apply_pdb_overrides(eventing(), [PodDisruptionBudgetOverride(
        name="eventing-webhook", maxUnavailable="50%")])
    spec = find(out, "PodDisruptionBudget", "eventing-webhook")["spec"]
    assert spec["maxUnavailable"] == "50%" and "minAvailable" not in spec


def test_unknown_pdb_is_refused_with_the_known_names() -> None:
    with pytest.raises(TransformError) as err:
        apply_pdb_overrides(serving(), [PodDisruptionBudgetOverride(
            name="activator", minAvailable="50%")])
    assert "'activator'" in str(err.value) and "activator-pdb, webhook-pdb" in str(err.value)
    assert apply_pdb_overrides(serving(), []) == _rendered("serving")


# ---------------------------------------------------------------------------- models


def test_models_accept_operator_spelling() -> None:
    override = WorkloadOverride.model_validate({
        "name": "activator", "replicas": 2, "labels": {"a": "b"}, "annotations": {"c": "d"},
        "nodeSelector": {"n": "s"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 30}],
        "affinity": {"podAntiAffinity": {}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                       "whenUnsatisfiable": "DoNotSchedule"}],
        "resources": [{"container": "activator", "requests": {"cpu": 0.5, "memory": "64Mi"}}],
        "env": [{"container": "activator", "envVars": [{"name": "A", "value": "1"}]}],
        "readinessProbes": [{"container": "activator", "timeoutSeconds": 2}],
        "livenessProbes": [{"container": "activator", "terminationGracePeriodSeconds": 5}],
        "hostNetwork": False,
    })
    assert override.resources[0].requests == {"cpu": "0.5", "memory": "64Mi"}
    assert PodDisruptionBudgetOverride.model_validate(
        {"name": "p", "maxUnavailable": 1}).max_unavailable == 1
    assert HighAvailability.model_validate({"replicas": 0}).replicas == 0


@pytest.mark.parametrize("model, raw, fragment", [
    (HighAvailability, {"replicas": -1}, "greater than or equal to 0"),
    (HighAvailability, {}, "replicas"),
    (HighAvailability, {"replicas": True}, "valid integer"),
    (HighAvailability, {"replicas": 2, "enabled": True}, "enabled"),
    (WorkloadOverride, {"name": "a", "replicas": -1}, "greater than or equal to 0"),
    (WorkloadOverride, {"name": "a", "nodeselector": {}}, "nodeselector"),
    (WorkloadOverride, {"replicas": 1}, "name"),
    (WorkloadOverride, {"name": "a", "labels": {manifests.CR_NAME_LABEL: "x"}},
     "set by knative-fleet"),
    (WorkloadOverride, {"name": "a", "resources": [{"container": "c",
                                                    "limits": {"memory": "1 Gi"}}]},
     "not a Kubernetes quantity"),
    (WorkloadOverride, {"name": "a", "resources": [{"requests": {"cpu": "1"}}]}, "container"),
    (WorkloadOverride, {"name": "a", "env": [{"container": "c", "envVars": [
        {"name": "A", "value": "1", "valueFrom": {}}]}]}, "not both"),
    (WorkloadOverride, {"name": "a", "env": [{"container": "c", "env": []}]}, "envVars"),
    (WorkloadOverride, {"name": "a", "tolerations": [{"operator": "Equal"}]}, "Exists"),
    (WorkloadOverride, {"name": "a", "tolerations": [{"key": "k", "effect": "Sometimes"}]},
     "effect"),
    (WorkloadOverride, {"name": "a", "topologySpreadConstraints": [{"maxSkew": 1}]},
     "topologyKey"),
    (WorkloadOverride, {"name": "a", "affinity": {"nodeAfinity": {}}}, "nodeAfinity"),
    (WorkloadOverride, {"name": "a", "readinessProbes": [{"container": "c",
                                                          "timeoutSeconds": 0}]},
     "greater than or equal to 1"),
    (WorkloadOverride, {"name": "a", "livenessProbes": [{"container": "c",
                                                         "httpGet": {"path": "/"}}]},
     "httpGet"),
    (ServiceOverride, {"name": "s", "selectors": {}}, "selectors"),
    (ServiceOverride, {"name": "s", "labels": {manifests.MANAGED_BY_LABEL: "me"}},
     "set by knative-fleet"),
    (PodDisruptionBudgetOverride, {"name": "p", "minAvailable": 1, "maxUnavailable": 1},
     "exactly one"),
    (PodDisruptionBudgetOverride, {"name": "p"}, "exactly one"),
    (PodDisruptionBudgetOverride, {"name": "p", "minAvailable": -1}, ">= 0"),
    (PodDisruptionBudgetOverride, {"name": "p", "minAvailable": True}, "valid integer"),
    (PodDisruptionBudgetOverride, {"name": "p", "minAvailable": "120%"}, "percentage"),
    (PodDisruptionBudgetOverride, {"name": "p", "maxUnavailable": "half"}, "percentage"),
    (PodDisruptionBudgetOverride, {"name": "p", "minAvailable": 1, "selector": {}}, "selector"),
])
def test_models_refuse_bad_input(model: type, raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        model.model_validate(raw)
    assert fragment in str(err.value)
