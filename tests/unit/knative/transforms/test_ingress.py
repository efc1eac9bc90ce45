"""The ingress choice and its options against the real 1.23 releases (operator parity:
pkg/reconciler/knativeserving/ingress)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from core.errors import TransformError
from core.names import SKIP_AWAIT_ANNOTATION
from knative.manifests import Rendered
from knative.transforms import config
from knative.transforms import ingress as ingress_key
from models.component import ServingSpec
from models.ingress import INGRESS_CLASSES, Ingress, KourierOptions
from tests.support.releases import find, serving, without


def apply_ingress(rendered: Rendered, ingress: Ingress,
                  user_config: dict[str, dict[str, str]] | None = None) -> Rendered:
    return ingress_key.transform(rendered, ServingSpec(ingress=ingress,
                                                       config=user_config or {}))


def merge_config(rendered: Rendered, user_config: dict[str, dict[str, str]]) -> Rendered:
    return config.transform(rendered, ServingSpec(config=user_config))


def pod(rendered: Rendered, name: str) -> dict:
    return find(rendered, "Deployment", name)["spec"]["template"]["spec"]


def ingress(raw: dict[str, Any]) -> Ingress:
    return Ingress.model_validate(raw)


# --- models ---------------------------------------------------------------------------------

def test_kourier_is_the_default_when_no_ingress_is_named() -> None:
    for chosen in (Ingress(), ingress({})):
        assert chosen.name == "kourier"
        assert chosen.kourier == KourierOptions()
        assert chosen.ingress_class == "kourier.ingress.networking.knative.dev"


@pytest.mark.parametrize("name", ["kourier", "istio", "gateway-api", "contour"])
def test_each_ingress_can_be_chosen(name: str) -> None:
    chosen = ingress({name: {}})
    assert chosen.name == name
    assert chosen.ingress_class == INGRESS_CLASSES[name]
    assert (chosen.kourier is None) == (name != "kourier")


def test_two_ingresses_are_refused() -> None:
    with pytest.raises(ValidationError, match="choose exactly one ingress, got kourier, istio"):
        ingress({"kourier": {}, "istio": {"enabled": True}})


def test_a_disabled_ingress_is_not_a_choice() -> None:
    assert ingress({"kourier": {"enabled": False}, "contour": {}}).name == "contour"
    with pytest.raises(ValidationError, match="every ingress named is disabled"):
        ingress({"kourier": {"enabled": False}})


@pytest.mark.parametrize("raw, message", [
    ({"kourier": {"service-type": "ExternalName"}}, "service-type"),
    ({"kourier": {"service-type": "loadbalancer"}}, "service-type"),
    ({"nginx": {}}, "nginx"),
    ({"kourier": {"serviceType": "NodePort"}}, "serviceType"),
    ({"istio": {"knative-ingress-gateway": {"selectors": {"a": "b"}}}}, "selectors"),
    ({"gateway-api": {"enabled": True, "class": "x"}}, "class"),
    ({"contour": {"visibility": "x"}}, "visibility"),
])
def test_bad_types_and_unknown_keys_are_refused(raw: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ingress(raw)


@pytest.mark.parametrize("kourier, message", [
    ({"service-type": "ClusterIP", "service-load-balancer-ip": "10.0.0.9"},
     "service-load-balancer-ip needs service-type LoadBalancer, not ClusterIP"),
    ({"service-load-balancer-ip": "10.0.0.300"}, "must be an IP address"),
    ({"http-port": 30080}, "need service-type: NodePort"),
    ({"service-type": "LoadBalancer", "https-port": 30443}, "need service-type: NodePort"),
    ({"service-type": "NodePort", "http-port": 70000}, "less than or equal to 65535"),
    ({"bootstrap-configmap": "My_Bootstrap"}, "must be a Kubernetes object name"),
])
def test_kourier_options_that_cannot_work_are_refused(kourier: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ingress({"kourier": kourier})


@pytest.mark.parametrize("server, message", [
    ({"port": {"number": 80}, "hosts": ["*"], "host": "x"}, "unknown keys host"),
    ({"port": {"number": 80}}, "hosts must be a non-empty list"),
    ({"port": {"number": "80"}, "hosts": ["*"]}, "integer `number`"),
    ({"port": {"number": 443}, "hosts": ["*"], "tls": {"mode": "STRICT"}}, "tls.mode"),
])
def test_malformed_istio_servers_are_refused(server: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ingress({"istio": {"knative-local-gateway": {"servers": [server]}}})


# --- ingress class --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kourier", "istio", "gateway-api", "contour"])
def test_the_chosen_ingress_class_goes_into_config_network(name: str) -> None:
    out = apply_ingress(serving(name), ingress({name: {}}))
    data = find(out, "ConfigMap", "config-network")["data"]
    assert data["ingress-class"] == INGRESS_CLASSES[name]
    assert "_example" in data  # the release's other keys stay


@pytest.mark.parametrize("configmap", ["network", "config-network"])
@pytest.mark.parametrize("key", ["ingress-class", "ingress.class"])
def test_the_users_ingress_class_wins(configmap: str, key: str) -> None:
    user = {configmap: {key: "my.ingress.example.com"}}
    before = copy.deepcopy(find(serving(), "ConfigMap", "config-network"))
    out = apply_ingress(serving(), Ingress(), user)
    assert find(out, "ConfigMap", "config-network") == before
    # In either order with merge_config, the user's value is what the spoke gets.
    both = apply_ingress(merge_config(serving(), user), Ingress(), user)
    data = find(both, "ConfigMap", "config-network")["data"]
    assert data[key] == "my.ingress.example.com"
    assert data.get("ingress-class", "my.ingress.example.com") == "my.ingress.example.com"


def test_user_config_for_other_network_keys_does_not_stop_the_ingress_class() -> None:
    out = apply_ingress(serving(), Ingress(), {"network": {"domain-template": "x"}})
    assert find(out, "ConfigMap", "config-network")["data"]["ingress-class"] == \
        INGRESS_CLASSES["kourier"]


@pytest.mark.parametrize("name", ["gateway-api", "contour"])
def test_gateway_api_and_contour_change_only_the_ingress_class(name: str) -> None:
    base = serving(name)
    out = apply_ingress(serving(name), ingress({name: {"enabled": True}}))
    find(out, "ConfigMap", "config-network")["data"].pop("ingress-class")
    assert out == base


# --- kourier --------------------------------------------------------------------------------

def test_default_kourier_keeps_the_release_service_and_gateway_namespace() -> None:
    base = serving()
    out = apply_ingress(serving(), Ingress())
    assert find(out, "Service", "kourier") == find(base, "Service", "kourier")
    assert find(out, "Service", "kourier")["spec"]["type"] == "LoadBalancer"
    # The operator's replaceGatewayNamespace: render() already points the controller at
    # the namespace the gateway moved to.
    env = {e["name"]: e.get("value") for c in pod(out, "net-kourier-controller")["containers"]
           for e in c.get("env", [])}
    assert env["KOURIER_GATEWAY_NAMESPACE"] == "knative-serving"


@pytest.mark.parametrize("service_type", ["ClusterIP", "NodePort", "LoadBalancer"])
def test_kourier_service_type(service_type: str) -> None:
    out = apply_ingress(serving(), ingress({"kourier": {"service-type": service_type}}))
    assert find(out, "Service", "kourier")["spec"]["type"] == service_type
    assert find(out, "Service", "kourier-internal")["spec"]["type"] == "ClusterIP"


def test_kourier_node_ports_go_to_the_http_and_https_ports() -> None:
    out = apply_ingress(serving(), ingress({"kourier": {
        "service-type": "NodePort", "http-port": 30080, "https-port": 30443}}))
    ports = {p["name"]: p for p in find(out, "Service", "kourier")["spec"]["ports"]}
    assert ports["http2"]["nodePort"] == 30080 and ports["http2"]["port"] == 80
    assert ports["https"]["nodePort"] == 30443 and ports["https"]["port"] == 443


def test_an_unset_node_port_is_left_to_kubernetes() -> None:
    out = apply_ingress(serving(), ingress({"kourier": {
        "service-type": "NodePort", "https-port": 30443}}))
    ports = {p["name"]: p for p in find(out, "Service", "kourier")["spec"]["ports"]}
    assert "nodePort" not in ports["http2"]
    assert ports["https"]["nodePort"] == 30443


def test_kourier_load_balancer_ip_and_no_wait_for_an_address() -> None:
    out = apply_ingress(serving(), ingress({"kourier": {
        "service-type": "LoadBalancer", "service-load-balancer-ip": "192.0.2.10"}}))
    svc = find(out, "Service", "kourier")
    assert svc["spec"]["loadBalancerIP"] == "192.0.2.10"
    assert svc["metadata"]["annotations"][SKIP_AWAIT_ANNOTATION] == "true"


def test_options_are_checked_against_the_release_service_type_too() -> None:
    # A release whose kourier Service is not a LoadBalancer: the model cannot know.
    rendered = serving()
    find(rendered, "Service", "kourier")["spec"]["type"] = "ClusterIP"
    with pytest.raises(TransformError, match="the kourier Service is ClusterIP"):
        apply_ingress(rendered, ingress({"kourier": {"service-load-balancer-ip": "192.0.2.1"}}))


def test_kourier_bootstrap_configmap_replaces_the_gateway_volume() -> None:
    out = apply_ingress(serving(), ingress({"kourier": {"bootstrap-configmap": "my-envoy"}}))
    gateway = pod(out, "3scale-kourier-gateway")
    assert gateway["volumes"] == [{"name": "config-volume", "configMap": {"name": "my-envoy"}}]
    assert gateway["containers"][0]["volumeMounts"] == [
        {"name": "config-volume", "mountPath": "/tmp/config"}]
    # The release's own bootstrap ConfigMap is still installed (the operator keeps it).
    assert find(out, "ConfigMap", "kourier-bootstrap")


def test_kourier_options_change_nothing_else() -> None:
    base = serving()
    out = apply_ingress(serving(), ingress({"kourier": {
        "service-type": "NodePort", "http-port": 30080, "bootstrap-configmap": "b"}}))
    changed = {(o["kind"], o["metadata"]["name"]) for o, b in zip(out.namespaced,
                                                                    base.namespaced, strict=True)
               if o != b}
    assert changed == {("ConfigMap", "config-network"), ("Service", "kourier"),
                       ("Deployment", "3scale-kourier-gateway")}
    assert out.cluster_scoped == base.cluster_scoped and out.crds == base.crds


# --- istio ----------------------------------------------------------------------------------

SERVERS = [{"port": {"number": 443, "name": "https", "protocol": "HTTPS"},
            "hosts": ["*.example.com"],
            "tls": {"mode": "SIMPLE", "credentialName": "wildcard-cert"}}]


def gateway_spec(rendered: Rendered, name: str) -> dict:
    return find(rendered, "Gateway", name)["spec"]


def test_istio_ingress_gateway_selector_and_servers_replace_the_release_ones() -> None:
    base = serving("istio")
    out = apply_ingress(serving("istio"), ingress({"istio": {"knative-ingress-gateway": {
        "selector": {"istio": "custom-gateway"}, "servers": SERVERS}}}))
    assert gateway_spec(out, "knative-ingress-gateway") == {
        "selector": {"istio": "custom-gateway"}, "servers": SERVERS}
    assert gateway_spec(out, "knative-local-gateway") == \
        gateway_spec(base, "knative-local-gateway")


def test_istio_local_gateway_selector_only_keeps_the_release_servers() -> None:
    base = serving("istio")
    out = apply_ingress(serving("istio"), ingress({"istio": {"knative-local-gateway": {
        "selector": {"app": "local-gw"}}}}))
    spec = gateway_spec(out, "knative-local-gateway")
    assert spec["selector"] == {"app": "local-gw"}
    assert spec["servers"] == gateway_spec(base, "knative-local-gateway")["servers"]
    assert spec["servers"][0]["port"]["number"] == 8081


def test_istio_local_gateway_selector_also_selects_for_its_service() -> None:
    # The operator's IngressServiceTransform: the knative-local-gateway Service (kept in
    # istio-system) selects the same gateway pods as the Gateway.
    base = serving("istio")
    out = apply_ingress(serving("istio"), ingress({"istio": {"knative-local-gateway": {
        "selector": {"app": "local-gw"}}}}))
    service = find(out, "Service", "knative-local-gateway")
    assert service["metadata"]["namespace"] == "istio-system"
    assert service["spec"]["selector"] == {"app": "local-gw"}
    assert service["spec"]["ports"] == find(base, "Service", "knative-local-gateway")[
        "spec"]["ports"]
    # servers alone leave the Service's selector as released
    out = apply_ingress(serving("istio"), ingress({"istio": {"knative-local-gateway": {
        "servers": SERVERS}}}))
    assert find(out, "Service", "knative-local-gateway") == \
        find(base, "Service", "knative-local-gateway")


def test_empty_istio_overrides_change_nothing_but_the_class() -> None:
    base = serving("istio")
    out = apply_ingress(serving("istio"), ingress({"istio": {
        "knative-ingress-gateway": {"selector": {}, "servers": []}}}))
    find(out, "ConfigMap", "config-network")["data"].pop("ingress-class")
    assert out == base


def test_istio_overrides_parse_from_stack_yaml() -> None:
    raw = yaml.safe_load("""
istio:
  knative-ingress-gateway:
    selector: {istio: ingressgateway-2}
    servers:
      - port: {number: 80, name: http, protocol: HTTP}
        hosts: ["*"]
""")
    assert ingress(raw).istio.knative_ingress_gateway.servers[0]["port"]["number"] == 80


# --- objects the options need ---------------------------------------------------------------

def test_choosing_an_ingress_whose_release_is_not_loaded_is_an_error() -> None:
    with pytest.raises(TransformError, match="load the kourier release file"):
        apply_ingress(serving("istio"), Ingress())


def test_missing_config_network_is_an_error() -> None:
    with pytest.raises(TransformError, match="config-network"):
        apply_ingress(without(serving(), "ConfigMap", "config-network"), Ingress())


@pytest.mark.parametrize("kind, name, kourier", [
    ("Service", "kourier", {"service-type": "NodePort"}),
    ("Deployment", "3scale-kourier-gateway", {"bootstrap-configmap": "b"}),
])
def test_missing_kourier_objects_are_an_error(kind: str, name: str, kourier: dict) -> None:
    with pytest.raises(TransformError, match=f"{kind} '{name}'"):
        apply_ingress(without(serving(), kind, name), ingress({"kourier": kourier}))


def test_a_gateway_without_the_release_bootstrap_volume_is_an_error() -> None:
    rendered = serving()
    pod(rendered, "3scale-kourier-gateway")["volumes"][0]["configMap"]["name"] = "other"
    with pytest.raises(TransformError, match="mounts no 'kourier-bootstrap'"):
        apply_ingress(rendered, ingress({"kourier": {"bootstrap-configmap": "b"}}))


def test_a_missing_istio_gateway_is_an_error() -> None:
    rendered = without(serving("istio"), "Gateway", "knative-local-gateway")
    with pytest.raises(TransformError, match="Gateway 'knative-local-gateway'"):
        apply_ingress(rendered, ingress({"istio": {
            "knative-local-gateway": {"selector": {"a": "b"}}}}))
