"""Knative's webhook configurations deleted first: by name for a component (one already gone
is done), by label and served namespace for a whole install; any other error stops it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes.client.rest import ApiException

from lifecycle import webhooks_first


def _config(name: str, namespace: str | None) -> SimpleNamespace:
    service = SimpleNamespace(namespace=namespace) if namespace else None
    return SimpleNamespace(metadata=SimpleNamespace(name=name), webhooks=[
        SimpleNamespace(client_config=SimpleNamespace(service=service))])


class FakeAdmission:
    """The admission API of one spoke: what exists, what was deleted, what fails."""

    def __init__(self, validating: list, mutating: list, fail: int | None = None) -> None:
        self.validating, self.mutating, self.fail = validating, mutating, fail
        self.deleted: list[str] = []
        self.selectors: list[str] = []

    def _delete(self, kind: str, items: list, name: str) -> None:
        if self.fail:
            raise ApiException(status=self.fail)
        if name not in {c.metadata.name for c in items}:
            raise ApiException(status=404)
        self.deleted.append(f"{kind}/{name}")

    def delete_validating_webhook_configuration(self, name: str, **_: Any) -> None:
        self._delete("ValidatingWebhookConfiguration", self.validating, name)

    def delete_mutating_webhook_configuration(self, name: str, **_: Any) -> None:
        self._delete("MutatingWebhookConfiguration", self.mutating, name)

    def list_validating_webhook_configuration(self, label_selector: str, **_: Any):
        self.selectors.append(label_selector)
        return SimpleNamespace(items=self.validating)

    def list_mutating_webhook_configuration(self, label_selector: str, **_: Any):
        self.selectors.append(label_selector)
        return SimpleNamespace(items=self.mutating)


@pytest.fixture
def spoke(monkeypatch: pytest.MonkeyPatch) -> FakeAdmission:
    fake = FakeAdmission(
        [_config("config.webhook.serving.knative.dev", "knative-serving"),
         _config("validation.webhook.eventing.knative.dev", "knative-eventing"),
         _config("someone-else", "other")],
        [_config("webhook.serving.knative.dev", "knative-serving"), _config("url", None)])

    @contextlib.contextmanager
    def client(connection: dict, timeout: float) -> Iterator[object]:
        assert connection == {"server": "https://spoke"} and timeout == 30
        yield object()

    monkeypatch.setattr(webhooks_first, "spoke_client", client)
    monkeypatch.setattr(webhooks_first.client, "AdmissionregistrationV1Api", lambda _api: fake)
    return fake


PROPS = {"spoke": "spoke-1", "connection": {"server": "https://spoke"},
         "pluginTimeoutSeconds": 30}


def test_a_component_s_configurations_by_name_one_already_gone(spoke: FakeAdmission) -> None:
    deleted = webhooks_first.delete_configurations({**PROPS, "configurations": [
        "MutatingWebhookConfiguration/webhook.serving.knative.dev",
        "ValidatingWebhookConfiguration/config.webhook.serving.knative.dev",
        "ValidatingWebhookConfiguration/validation.webhook.serving.knative.dev"]})
    assert deleted == spoke.deleted == [
        "MutatingWebhookConfiguration/webhook.serving.knative.dev",
        "ValidatingWebhookConfiguration/config.webhook.serving.knative.dev"]


def test_an_install_s_configurations_by_label_and_served_namespace(spoke: FakeAdmission) -> None:
    deleted = webhooks_first.delete_install_configurations({**PROPS, "anchors": [
        "knative-serving/knativeserving-knative-serving-root-owner"]})
    assert deleted == ["ValidatingWebhookConfiguration/config.webhook.serving.knative.dev",
                       "MutatingWebhookConfiguration/webhook.serving.knative.dev"]
    assert set(spoke.selectors) == {"app.kubernetes.io/managed-by=knative-fleet"}


def test_any_other_error_stops_it_naming_the_spoke(spoke: FakeAdmission) -> None:
    spoke.fail = 403
    with pytest.raises(ApiException):
        webhooks_first.delete_configurations({**PROPS, "configurations": [
            "MutatingWebhookConfiguration/webhook.serving.knative.dev"]})
    with pytest.raises(webhooks_first.WebhookConfigurationsLeft,
                       match="^spoke 'spoke-1': could not delete the install's webhook "
                       "configurations before their webhooks: ApiException"):
        webhooks_first.delete_install_configurations_or_refuse(
            {**PROPS, "anchors": ["knative-eventing/x"]})
    assert spoke.deleted == []
