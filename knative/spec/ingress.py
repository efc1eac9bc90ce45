"""spec.ingress: the operator's ingress Transformers
(pkg/reconciler/knativeserving/ingress/ingress.go, with kourier.go and istio.go).

The models are what the user writes under `serving.ingress`; the transform points
Serving's config-network at the chosen ingress and applies that ingress's options. The
product's one difference from the operator: exactly one ingress, Kourier when none is
named. Serving only: a spec without the key is left alone.
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from core.errors import TransformError
from core.strict import Strict
from knative.manifests import SKIP_AWAIT_ANNOTATION, Rendered
from knative.objects import all_objects, find, pod_template_spec, require
from knative.spec.config import ConfigData, user_config_sets

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

IngressName = Literal["kourier", "istio", "gateway-api", "contour"]

# The value Serving's config-network `ingress-class` needs for each ingress.
INGRESS_CLASSES: dict[str, str] = {
    "kourier": "kourier.ingress.networking.knative.dev",
    "istio": "istio.ingress.networking.knative.dev",
    "gateway-api": "gateway-api.ingress.networking.knative.dev",
    "contour": "contour.ingress.networking.knative.dev",
}
# config-network keys Serving reads the ingress class from (current, then legacy).
INGRESS_CLASS_KEYS = ("ingress-class", "ingress.class")
PROVIDER_LABEL = "networking.knative.dev/ingress-provider"

# Kourier objects the operator's kourier.go changes.
KOURIER_SERVICE = "kourier"
KOURIER_GATEWAY_DEPLOYMENT = "3scale-kourier-gateway"
KOURIER_DEFAULT_BOOTSTRAP = "kourier-bootstrap"

# net-istio Gateways the operator's istio.go overrides.
ISTIO_GATEWAY_GROUP = "networking.istio.io"
ISTIO_INGRESS_GATEWAY = "knative-ingress-gateway"
ISTIO_LOCAL_GATEWAY = "knative-local-gateway"
# Fields of an Istio Gateway server (istio.io networking Gateway `spec.servers[]`).
ISTIO_SERVER_KEYS = frozenset({"port", "bind", "hosts", "name", "tls", "defaultEndpoint"})
ISTIO_TLS_MODES = frozenset({"PASSTHROUGH", "SIMPLE", "MUTUAL", "AUTO_PASSTHROUGH",
                             "ISTIO_MUTUAL", "OPTIONAL_MUTUAL"})
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Port = Annotated[int, Field(ge=1, le=65535)]


def _object_name(value: str, what: str) -> str:
    """Kubernetes object names are DNS-1123 subdomains; say so before a spoke refuses one."""
    if len(value) > 253 or not _DNS_SUBDOMAIN.match(value):
        raise ValueError(f"{what} must be a Kubernetes object name (lower-case a-z, 0-9, '-', "
                         f"'.'), got {value!r}")
    return value


class KourierOptions(Strict):
    """`ingress.kourier`: the operator's KourierIngressConfiguration."""

    enabled: bool = True
    service_type: Literal["ClusterIP", "NodePort", "LoadBalancer"] | None = Field(
        None, alias="service-type")
    service_load_balancer_ip: str | None = Field(None, alias="service-load-balancer-ip")
    http_port: Port | None = Field(None, alias="http-port")
    https_port: Port | None = Field(None, alias="https-port")
    bootstrap_configmap: str | None = Field(None, alias="bootstrap-configmap")

    @field_validator("service_load_balancer_ip")
    @classmethod
    def ip_address(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ipaddress.ip_address(value)
            except ValueError:
                raise ValueError(
                    f"service-load-balancer-ip must be an IP address, got {value!r}") from None
        return value

    @field_validator("bootstrap_configmap")
    @classmethod
    def configmap_name(cls, value: str | None) -> str | None:
        return None if value is None else _object_name(value, "bootstrap-configmap")

    @model_validator(mode="after")
    def options_fit_service_type(self) -> KourierOptions:
        # The operator refuses these on the wrong Service type; the release's kourier
        # Service is a LoadBalancer, so "unset" means LoadBalancer here.
        effective = self.service_type or "LoadBalancer"
        if self.service_load_balancer_ip is not None and effective != "LoadBalancer":
            raise ValueError(f"service-load-balancer-ip needs service-type LoadBalancer, "
                             f"not {effective}")
        if (self.http_port or self.https_port) and self.service_type != "NodePort":
            raise ValueError("http-port and https-port are NodePort ports: they need "
                             f"service-type: NodePort (got {self.service_type or 'unset'})")
        return self


def _istio_server(index: int, server: Any) -> dict[str, Any]:
    """Istio's webhook rejects a malformed Gateway on every spoke; catch it in config."""
    where = f"servers[{index}]"
    if not isinstance(server, dict):
        raise ValueError(f"{where} must be a mapping (an Istio Gateway server)")
    unknown = sorted(set(server) - ISTIO_SERVER_KEYS)
    if unknown:
        raise ValueError(f"{where} has unknown keys {', '.join(unknown)}; an Istio Gateway "
                         f"server has {', '.join(sorted(ISTIO_SERVER_KEYS))}")
    port = server.get("port")
    if not isinstance(port, dict) or not isinstance(port.get("number"), int):
        raise ValueError(f"{where}.port must be a mapping with an integer `number`")
    hosts = server.get("hosts")
    if (not isinstance(hosts, list) or not hosts
            or not all(isinstance(h, str) and h for h in hosts)):
        raise ValueError(f"{where}.hosts must be a non-empty list of host names")
    tls = server.get("tls")
    if tls is not None:
        if not isinstance(tls, dict):
            raise ValueError(f"{where}.tls must be a mapping")
        mode = tls.get("mode")
        if mode is not None and mode not in ISTIO_TLS_MODES:
            raise ValueError(f"{where}.tls.mode must be one of "
                             f"{', '.join(sorted(ISTIO_TLS_MODES))}, got {mode!r}")
    return server


class IstioGatewayOverride(Strict):
    """One net-istio Gateway's override: a non-empty value replaces the release's whole
    `spec.selector` / `spec.servers` (the operator's updateIstioGateway)."""

    selector: dict[str, str] = {}
    servers: list[dict[str, Any]] = []

    @field_validator("servers")
    @classmethod
    def istio_servers(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [_istio_server(i, s) for i, s in enumerate(value)]


class IstioOptions(Strict):
    """`ingress.istio`: the operator's IstioIngressConfiguration."""

    enabled: bool = True
    knative_ingress_gateway: IstioGatewayOverride | None = Field(
        None, alias="knative-ingress-gateway")
    knative_local_gateway: IstioGatewayOverride | None = Field(
        None, alias="knative-local-gateway")


class GatewayApiOptions(Strict):
    """`ingress.gateway-api`: no options (the operator has no transform for it)."""

    enabled: bool = True


class ContourOptions(Strict):
    """`ingress.contour`: no options (the operator has no transform for it)."""

    enabled: bool = True


_INGRESS_FIELDS: tuple[tuple[str, IngressName], ...] = (
    ("kourier", "kourier"), ("istio", "istio"), ("gateway_api", "gateway-api"),
    ("contour", "contour"))


class Ingress(Strict):
    """Exactly one ingress; Kourier when none is named.

    An entry with `enabled: false` is not a choice (operator CRs list disabled ingresses);
    naming only disabled ingresses leaves Serving without one and is refused.
    """

    kourier: KourierOptions | None = None
    istio: IstioOptions | None = None
    gateway_api: GatewayApiOptions | None = Field(None, alias="gateway-api")
    contour: ContourOptions | None = None

    @model_validator(mode="after")
    def one_ingress(self) -> Ingress:
        named = [name for field, name in _INGRESS_FIELDS if getattr(self, field) is not None]
        enabled = [name for field, name in _INGRESS_FIELDS
                   if getattr(self, field) is not None and getattr(self, field).enabled]
        if len(enabled) > 1:
            raise ValueError(f"choose exactly one ingress, got {', '.join(enabled)}")
        if named and not enabled:
            raise ValueError(f"every ingress named is disabled ({', '.join(named)}); Serving "
                             "needs one: enable one, or name none for Kourier")
        if not named:
            self.kourier = KourierOptions()
        return self

    @property
    def name(self) -> IngressName:
        """The chosen ingress, as releases.INGRESS_FILES names it."""
        for field, name in _INGRESS_FIELDS:
            options = getattr(self, field)
            if options is not None and options.enabled:
                return name
        return "kourier"

    @property
    def ingress_class(self) -> str:
        """The config-network `ingress-class` value of the chosen ingress."""
        return INGRESS_CLASSES[self.name]


# --- transform ----------------------------------------------------------------------------

def _require(rendered: Rendered, kind: str, name: str, why: str,
             api_group: str | None = None) -> dict:
    return require(all_objects(rendered), kind, name, why=why, api_group=api_group,
                   hint="check that the release files loaded are the ones for this ingress "
                        "and version")


def _set_ingress_class(rendered: Rendered, ingress: Ingress,
                       user_config: ConfigData | None) -> None:
    if user_config_sets(user_config, "config-network", INGRESS_CLASS_KEYS):
        return
    network = _require(rendered, "ConfigMap", "config-network", "the ingress choice")
    data = dict(network.get("data") or {})
    data["ingress-class"] = ingress.ingress_class
    network["data"] = data


def _apply_kourier(rendered: Rendered, options: KourierOptions) -> None:
    """The operator's configureGatewayService and configureBootstrapConfigMap."""
    touches_service = (options.service_type or options.service_load_balancer_ip
                       or options.http_port or options.https_port)
    if touches_service:
        svc = _require(rendered, "Service", KOURIER_SERVICE, "ingress.kourier")
        spec = svc.setdefault("spec", {})
        if options.service_type:
            spec["type"] = options.service_type
        service_type = spec.get("type", "ClusterIP")
        if options.service_load_balancer_ip:
            if service_type != "LoadBalancer":
                raise TransformError(
                    f"ingress.kourier.service-load-balancer-ip needs a LoadBalancer Service; "
                    f"the kourier Service is {service_type}: set service-type: LoadBalancer")
            spec["loadBalancerIP"] = options.service_load_balancer_ip
        if options.http_port or options.https_port:
            if service_type != "NodePort":
                raise TransformError(
                    f"ingress.kourier.http-port/https-port need a NodePort Service; the "
                    f"kourier Service is {service_type}: set service-type: NodePort")
            for port in spec.get("ports") or []:
                # Operator rule: the port named "https" gets https-port, every other one
                # (the release's "http2") gets http-port.
                wanted = options.https_port if port.get("name") == "https" else options.http_port
                if wanted:
                    port["nodePort"] = wanted
        if service_type == "LoadBalancer":
            # Like render(): a spoke without a load balancer never gets an address.
            meta = svc.setdefault("metadata", {})
            meta.setdefault("annotations", {})[SKIP_AWAIT_ANNOTATION] = "true"
    if options.bootstrap_configmap:
        gateway = _require(rendered, "Deployment", KOURIER_GATEWAY_DEPLOYMENT,
                           "ingress.kourier.bootstrap-configmap")
        volumes = [v for v in pod_template_spec(gateway).get("volumes") or []
                   if (v.get("configMap") or {}).get("name") == KOURIER_DEFAULT_BOOTSTRAP]
        if not volumes:
            raise TransformError(
                f"ingress.kourier.bootstrap-configmap: the {KOURIER_GATEWAY_DEPLOYMENT} "
                f"Deployment of this release mounts no {KOURIER_DEFAULT_BOOTSTRAP!r} ConfigMap "
                f"to replace; this Kourier release does not support the option")
        for volume in volumes:
            volume["configMap"] = {"name": options.bootstrap_configmap}


def _apply_istio(rendered: Rendered, options: IstioOptions) -> None:
    """The operator's gatewayTransform: non-empty selector/servers replace the Gateway's;
    and its IngressServiceTransform (ingress/ingress_service.go updateIstioService): a
    non-empty selector also replaces the `spec.selector` of the release Service of the
    same name (net-istio's knative-local-gateway Service in istio-system), so the
    cluster-local traffic reaches the same gateway pods as the Gateway."""
    for name, override, key in (
            (ISTIO_INGRESS_GATEWAY, options.knative_ingress_gateway, "knative-ingress-gateway"),
            (ISTIO_LOCAL_GATEWAY, options.knative_local_gateway, "knative-local-gateway")):
        if override is None or not (override.selector or override.servers):
            continue
        gateway = _require(rendered, "Gateway", name, f"ingress.istio.{key}",
                           api_group=ISTIO_GATEWAY_GROUP)
        spec = gateway.setdefault("spec", {})
        if override.selector:
            spec["selector"] = dict(override.selector)
            service = find([*rendered.namespaced, *rendered.external], "Service", name,
                           api_group="")
            if service is not None:
                service.setdefault("spec", {})["selector"] = dict(override.selector)
        if override.servers:
            spec["servers"] = [dict(s) for s in override.servers]


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Points Serving at the chosen ingress and applies that ingress's options.

    config-network `ingress-class` gets the chosen ingress's class unless the user's
    `config` sets `ingress-class` (or the legacy `ingress.class`) itself: the user's config
    wins. The options change only the chosen ingress's objects; an object an option
    needs but the release lacks is a TransformError, not a silent no-op.
    """
    ingress: Ingress | None = getattr(spec, "ingress", None)
    if ingress is None:
        return rendered
    name = ingress.name
    provided = any(((o.get("metadata") or {}).get("labels") or {}).get(PROVIDER_LABEL) == name
                   for o in [*rendered.namespaced, *rendered.external, *rendered.cluster_scoped])
    if not provided:
        raise TransformError(
            f"the ingress is {name!r} but this release has no object of that ingress "
            f"(label {PROVIDER_LABEL}={name}); load the {name} release file with Serving")
    _set_ingress_class(rendered, ingress, spec.config)
    if name == "kourier" and ingress.kourier is not None:
        _apply_kourier(rendered, ingress.kourier)
    elif name == "istio" and ingress.istio is not None:
        _apply_istio(rendered, ingress.istio)
    # gateway-api and contour: the operator has no transforms for them.
    return rendered
