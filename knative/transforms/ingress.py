"""spec.ingress: the operator's ingress Transformers
(pkg/reconciler/knativeserving/ingress/ingress.go, with kourier.go and istio.go).

Points Serving's config-network at the chosen ingress (models.ingress) and applies that
ingress's options. Serving only: a spec without the key is left alone.
"""

from __future__ import annotations

from core.errors import TransformError
from core.names import SKIP_AWAIT_ANNOTATION
from knative.objects import Rendered, all_objects, find, pod_template_spec, require
from knative.transforms.config import user_config_sets
from models.component import ComponentSpec
from models.config import ConfigData
from models.ingress import Ingress, IstioOptions, KourierOptions

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
