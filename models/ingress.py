"""spec.ingress: the models of what the user writes under `serving.ingress`, for the
operator's ingress Transformers (pkg/reconciler/knativeserving/ingress/ingress.go, with
kourier.go and istio.go); knative.transforms.ingress applies them. The product's one
difference from the operator: exactly one ingress, Kourier when none is named.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from core.strict import Strict

IngressName = Literal["kourier", "istio", "gateway-api", "contour"]

# The value Serving's config-network `ingress-class` needs for each ingress.
INGRESS_CLASSES: dict[str, str] = {
    "kourier": "kourier.ingress.networking.knative.dev",
    "istio": "istio.ingress.networking.knative.dev",
    "gateway-api": "gateway-api.ingress.networking.knative.dev",
    "contour": "contour.ingress.networking.knative.dev",
}

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

