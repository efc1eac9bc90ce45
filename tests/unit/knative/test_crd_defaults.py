"""knative.crd_defaults: the fields the API server fills into a stored CRD, and a body with
them filled in where it has none."""

from __future__ import annotations

import copy

from knative.crd_defaults import server_defaults, with_defaults


def crd(**spec: object) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "brokers.eventing.knative.dev"},
            "spec": {"group": "eventing.knative.dev",
                     "names": {"kind": "Broker", "plural": "brokers"},
                     "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {}}}], **spec}}


def test_a_crd_without_list_kind_or_conversion_gets_the_servers():
    assert server_defaults(crd()) == {"spec": {"names": {"listKind": "BrokerList"},
                                               "conversion": {"strategy": "None"}}}


def test_a_conversion_webhook_service_without_a_port_gets_443():
    webhook = {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "eventing-webhook", "namespace": "knative-eventing"}}}}
    assert server_defaults(crd(conversion=webhook))["spec"]["conversion"] == {
        "webhook": {"clientConfig": {"service": {"port": 443}}}}


def test_what_the_manifest_sets_is_not_a_default():
    body = crd(conversion={"strategy": "None"})
    body["spec"]["names"]["listKind"] = "Brokers"
    assert server_defaults(body) == {}
    assert server_defaults({"kind": "ConfigMap", "metadata": {"name": "x"}}) == {}


def test_the_defaults_fill_only_what_is_missing_and_leave_the_body_as_it_was():
    body = crd()
    before = copy.deepcopy(body)
    filled = with_defaults(body, server_defaults(body))
    assert filled["spec"]["names"] == {"kind": "Broker", "plural": "brokers",
                                       "listKind": "BrokerList"}
    assert filled["spec"]["conversion"] == {"strategy": "None"}
    assert body == before
    assert filled["spec"]["versions"] is body["spec"]["versions"]  # shared, not copied
    assert with_defaults(filled, {"spec": {"names": {"listKind": "Other"}}}) == filled
