"""Which Deployments answer an install's webhooks: the pods the webhook Service selects."""

from __future__ import annotations

from knative.webhook_backends import webhook_deployments


def deployment(name: str, labels: dict, namespace: str = "knative-serving") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"metadata": {"labels": labels}}}}


def service(name: str, selector: dict, namespace: str = "knative-serving") -> dict:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}}


def configuration(kind: str, service_name: str, namespace: str = "knative-serving") -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": f"{service_name}.x.dev"},
            "webhooks": [{"name": "w", "clientConfig": {
                "service": {"name": service_name, "namespace": namespace}}}]}


def test_the_deployments_behind_each_configuration_s_service() -> None:
    objects = [
        deployment("webhook", {"app": "webhook", "role": "webhook", "extra": "x"}),
        deployment("controller", {"app": "controller"}),
        deployment("other-webhook", {"role": "webhook"}, namespace="elsewhere"),
        service("webhook", {"role": "webhook"}),
        service("controller", {"app": "controller"}),
        configuration("ValidatingWebhookConfiguration", "webhook"),
        configuration("MutatingWebhookConfiguration", "webhook"),
    ]
    assert webhook_deployments(objects) == {("knative-serving", "webhook")}


def test_a_configuration_whose_service_is_not_in_the_install_names_nothing() -> None:
    objects = [deployment("webhook", {"role": "webhook"}),
               configuration("ValidatingWebhookConfiguration", "webhook", "elsewhere"),
               {"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "url"},
                "webhooks": [{"clientConfig": {"url": "https://example.com"}}]}]
    assert webhook_deployments(objects) == frozenset()
    assert webhook_deployments([service("webhook", {}), *objects]) == frozenset()
