"""A webhook pod as the lab plays it: Knative's command of the pod's component and minor,
the pod's own environment (field references resolved), its ServiceAccount's rights."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lab.wait import wait_for
from lab.webhooks.process import (
    NoWebhookCommand,
    WebhookProcess,
    impersonating_kubeconfig,
    pod_webhook,
)

POD = {
    "metadata": {"name": "webhook-abc", "namespace": "knative-serving",
                 "labels": {"app.kubernetes.io/version": "1.23.0", "role": "webhook"}},
    "spec": {"serviceAccountName": "controller", "containers": [{
        "image": "gcr.io/knative-releases/knative.dev/serving/cmd/webhook@sha256:00",
        "ports": [{"name": "metrics", "containerPort": 9090},
                  {"name": "https-webhook", "containerPort": 8443}],
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "SYSTEM_NAMESPACE",
                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "WEBHOOK_NAME", "value": "webhook"}]}]},
    "status": {"podIP": "10.0.1.1", "phase": "Running"},
}


def test_the_pod_s_command_env_port_and_account() -> None:
    webhook = pod_webhook("spoke-1", POD)
    assert (webhook.component, webhook.minor, webhook.ip, webhook.port) == (
        "serving", "1.23", "10.0.1.1", 8443)
    assert webhook.service_account == "controller"
    assert dict(webhook.env) == {"POD_NAME": "webhook-abc", "SYSTEM_NAMESPACE": "knative-serving",
                                 "WEBHOOK_NAME": "webhook"}
    assert webhook.key == ("spoke-1", "knative-serving", "webhook-abc")


def test_the_component_is_the_pod_s_role_whatever_registry_its_image_comes_from() -> None:
    mirrored = {**POD, "spec": {**POD["spec"], "containers": [
        {**POD["spec"]["containers"][0], "image": "registry.example.com/knative/webhook:v1"}]}}
    assert pod_webhook("spoke-1", mirrored).component == "serving"
    eventing = {**POD, "metadata": {**POD["metadata"], "labels": {
        "app.kubernetes.io/version": "1.22.2", "role": "eventing-webhook"}}}
    assert (pod_webhook("spoke-1", eventing).component,
            pod_webhook("spoke-1", eventing).minor) == ("eventing", "1.22")


def test_an_unknown_role_or_version_is_no_webhook_command() -> None:
    other = {**POD, "metadata": {**POD["metadata"], "labels": {
        "app.kubernetes.io/version": "1.23.0", "role": "net-istio-webhook"}}}
    with pytest.raises(NoWebhookCommand, match="net-istio-webhook"):
        pod_webhook("spoke-1", other)
    unlabelled = {**POD, "metadata": {**POD["metadata"], "labels": {"role": "webhook"}}}
    with pytest.raises(NoWebhookCommand, match="version label"):
        pod_webhook("spoke-1", unlabelled)


def test_the_kubeconfig_acts_as_the_pod_s_service_account(tmp_path: Path) -> None:
    admin = tmp_path / "admin.kubeconfig"
    admin.write_text(yaml.safe_dump({"users": [{"name": "admin", "user": {"token": "t"}}]}))
    out = impersonating_kubeconfig(admin, "knative-serving", "controller", tmp_path / "w" / "k")
    user = yaml.safe_load(out.read_text())["users"][0]["user"]
    assert user == {"token": "t", "as": "system:serviceaccount:knative-serving:controller"}
    assert out.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("printed,lost", [
    ('{"error":"listen tcp :46837: bind: address already in use"}', True),
    ('{"message":"Informers have been synced"}', False),
], ids=["port-taken", "serving"])
def test_a_webhook_whose_port_was_taken_is_known_by_its_own_log(
        tmp_path: Path, printed: str, lost: bool) -> None:
    """Only what this process logged counts: an earlier run's error in the same log (the
    pod's webhook started again) does not."""
    admin = tmp_path / "admin.kubeconfig"
    admin.write_text(yaml.safe_dump({"users": [{"name": "admin", "user": {"token": "t"}}]}))
    work = tmp_path / "work"
    work.mkdir()
    (work / "knative-serving-webhook-abc.log").write_text(
        "an earlier run: bind: address already in use\n")
    command = tmp_path / "webhook"
    command.write_text(f"#!/bin/sh\necho '{printed}'\nexec sleep 30\n")
    command.chmod(0o755)
    proc = WebhookProcess(pod_webhook("spoke-1", POD), command, admin, work)
    try:
        wait_for(lambda: printed.encode() in proc.log.read_bytes(), 10, interval=0.05,
                 what="the command's line in its log")
        assert proc.lost_its_port() is lost
    finally:
        proc.stop()
