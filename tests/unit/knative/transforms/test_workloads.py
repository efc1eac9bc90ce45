"""`workloads` against the real 1.23 Serving and Eventing releases (operator parity:
OverridesTransform, pkg/reconciler/common/workload_override.go)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from core.errors import TransformError
from core.names import CR_NAME_LABEL
from knative.manifests import Rendered
from knative.objects import pod_spec
from knative.transforms import workloads as workloads_key
from models.component import ComponentSpec
from models.workloads import WorkloadOverride
from tests.support.releases import eventing, find, replicas, serving
from tests.support.releases import hpa_range as hpa

MIGRATE_SERVING = "storage-version-migration-serving-serving-1.23.0"


def apply_workload_overrides(rendered: Rendered,
                             overrides: list[WorkloadOverride] | None) -> Rendered:
    return workloads_key.transform(rendered, ComponentSpec(workloads=overrides or []))


def container(rendered: Rendered, kind: str, name: str, container: str) -> dict:
    spec = pod_spec(find(rendered, kind, name))
    assert spec is not None
    return next(c for c in spec["containers"] if c["name"] == container)


def workload(**raw: Any) -> WorkloadOverride:
    return WorkloadOverride.model_validate(raw)


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


def test_replicas_of_an_hpa_scaled_deployment_never_lower_its_hpa() -> None:
    # The operator's hpaTransform: an HPA that already has as many keeps its range.
    base = eventing()
    find(base, "HorizontalPodAutoscaler", "broker-ingress-hpa")["spec"]["minReplicas"] = 4
    out = apply_workload_overrides(base, [workload(name="mt-broker-ingress", replicas=2)])
    assert hpa(out, "broker-ingress-hpa") == (4, 10)


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
    assert apply_workload_overrides(serving(), None) == serving()
    assert apply_workload_overrides(serving(), []) == serving()


# ---------------------------------------------------------------------------- deployments


def apply_spec(rendered: Rendered, raw: dict) -> Rendered:
    return workloads_key.transform(rendered, ComponentSpec.model_validate(raw))


def test_deprecated_deployments_apply_like_workloads() -> None:
    entry = {"name": "controller", "replicas": 4, "labels": {"team": "a"},
             "env": [{"container": "controller",
                      "envVars": [{"name": "FLEET_REGION", "value": "eu-west"}]}]}
    assert apply_spec(serving(), {"deployments": [entry]}) == \
        apply_spec(serving(), {"workloads": [entry]})
    out = apply_spec(serving(), {"deployments": [entry]})
    assert replicas(out, "controller") == 4
    assert container(out, "Deployment", "controller", "controller")["env"][-1] == {
        "name": "FLEET_REGION", "value": "eu-west"}


def test_workloads_apply_after_deployments_and_win_on_a_field_both_set() -> None:
    # The operator's GetWorkloadOverrides: append(DeploymentOverride, Workloads...), and
    # OverridesTransform applies them in that order.
    before = container(serving(), "Deployment", "controller", "controller")["env"]
    out = apply_spec(serving(), {
        "workloads": [{"name": "controller", "replicas": 3, "labels": {"team": "b"},
                       "env": [{"container": "controller", "envVars": [
                           {"name": "WHO", "value": "workloads"},
                           {"name": "ONLY_WORKLOADS", "value": "w"}]}]}],
        "deployments": [{"name": "controller", "replicas": 2,
                         "labels": {"team": "a", "tier": "control"},
                         "env": [{"container": "controller", "envVars": [
                             {"name": "ONLY_DEPLOYMENTS", "value": "d"},
                             {"name": "WHO", "value": "deployments"}]}]}]})
    controller = find(out, "Deployment", "controller")
    assert replicas(out, "controller") == 3
    assert {k: controller["metadata"]["labels"][k] for k in ("team", "tier")} == {
        "team": "b", "tier": "control"}
    assert container(out, "Deployment", "controller", "controller")["env"] == [
        *before,
        {"name": "ONLY_DEPLOYMENTS", "value": "d"},
        {"name": "WHO", "value": "workloads"},
        {"name": "ONLY_WORKLOADS", "value": "w"},
    ]


def test_a_deployments_entry_on_another_workload_is_kept() -> None:
    out = apply_spec(serving(), {"deployments": [{"name": "autoscaler", "replicas": 2}],
                                 "workloads": [{"name": "controller", "replicas": 3}]})
    assert (replicas(out, "autoscaler"), replicas(out, "controller")) == (2, 3)


def test_errors_of_a_deployments_entry_name_deployments() -> None:
    with pytest.raises(TransformError, match=r"^deployments names 'activater'.*known: "):
        apply_spec(serving(), {"deployments": [{"name": "activater", "replicas": 2}]})
    with pytest.raises(TransformError, match=r"^deployments 'controller' env names container "
                                             r"'controler'"):
        apply_spec(serving(), {"deployments": [{"name": "controller", "env": [
            {"container": "controler", "envVars": [{"name": "A", "value": "b"}]}]}]})
    with pytest.raises(TransformError, match=r"^workloads names 'activater'"):
        apply_spec(serving(), {"workloads": [{"name": "activater", "replicas": 2}]})


def test_deployments_entries_are_checked_like_workloads_entries() -> None:
    spec = ComponentSpec.model_validate({"deployments": [{"name": "controller", "replicas": 1}]})
    assert spec.deployments == [workload(name="controller", replicas=1)]
    assert spec.workload_overrides() == spec.deployments
    with pytest.raises(ValidationError, match=r"deployments\.0\.replicas"):
        ComponentSpec.model_validate({"deployments": [{"name": "controller", "replicas": -1}]})


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


@pytest.mark.parametrize("raw, fragment", [
    ({"name": "a", "replicas": -1}, "greater than or equal to 0"),
    ({"name": "a", "nodeselector": {}}, "nodeselector"),
    ({"replicas": 1}, "name"),
    ({"name": "a", "labels": {CR_NAME_LABEL: "x"}},
     "set by knative-fleet"),
    ({"name": "a", "resources": [{"container": "c",
                                                    "limits": {"memory": "1 Gi"}}]},
     "not a Kubernetes quantity"),
    ({"name": "a", "resources": [{"requests": {"cpu": "1"}}]}, "container"),
    ({"name": "a", "env": [{"container": "c", "envVars": [
        {"name": "A", "value": "1", "valueFrom": {}}]}]}, "not both"),
    ({"name": "a", "env": [{"container": "c", "env": []}]}, "envVars"),
    ({"name": "a", "tolerations": [{"operator": "Equal"}]}, "Exists"),
    ({"name": "a", "tolerations": [{"key": "k", "effect": "Sometimes"}]},
     "effect"),
    ({"name": "a", "topologySpreadConstraints": [{"maxSkew": 1}]},
     "topologyKey"),
    ({"name": "a", "affinity": {"nodeAfinity": {}}}, "nodeAfinity"),
    ({"name": "a", "readinessProbes": [{"container": "c",
                                                          "timeoutSeconds": 0}]},
     "greater than or equal to 1"),
    ({"name": "a", "livenessProbes": [{"container": "c",
                                                         "httpGet": {"path": "/"}}]},
     "httpGet"),
])
def test_model_refuses_bad_input(raw: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        WorkloadOverride.model_validate(raw)
    assert fragment in str(err.value)
