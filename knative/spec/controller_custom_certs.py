"""spec.controller-custom-certs: the operator's CustomCertsTransform
(pkg/reconciler/knativeserving/common/certs.go).

A ConfigMap or Secret of CA certs the Serving controller trusts when it resolves image
digests (registries with self-signed certs). Serving only: a spec without the key is left
alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator

from core.errors import TransformError
from core.strict import Strict
from knative.manifests import Rendered
from knative.spec.ingress import pod_template_spec, require

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

CUSTOM_CERTS_DEPLOYMENT = "controller"
CUSTOM_CERTS_ENV = "SSL_CERT_DIR"
CUSTOM_CERTS_MOUNT_PATH = "/custom-certs"
CUSTOM_CERTS_PREFIX = "custom-certs-"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class ControllerCustomCerts(Strict):
    """`controller-custom-certs`: a ConfigMap or Secret of CA certs the Serving controller
    trusts when it resolves image digests (registries with self-signed certs)."""

    type: Literal["ConfigMap", "Secret"]
    name: str

    @field_validator("name")
    @classmethod
    def volume_name_fits(cls, value: str) -> str:
        # The operator names the volume custom-certs-<name>: a DNS-1123 label of <= 63.
        volume = CUSTOM_CERTS_PREFIX + value
        if not _DNS_LABEL.match(value) or len(volume) > 63:
            raise ValueError(
                f"name must be a DNS-1123 label of at most {63 - len(CUSTOM_CERTS_PREFIX)} "
                f"characters (it becomes the volume name {CUSTOM_CERTS_PREFIX}<name>), "
                f"got {value!r}")
        return value


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """The custom certs on the Serving `controller` Deployment.

    Adds volume `custom-certs-<name>` (the ConfigMap or Secret), mounts it at
    /custom-certs in the first container and sets SSL_CERT_DIR=/custom-certs there, so
    the controller trusts registries signed by those CAs. Entries of the same name are
    replaced rather than duplicated, so applying it twice changes nothing.
    """
    certs: ControllerCustomCerts | None = getattr(spec, "controller_custom_certs", None)
    if certs is None:
        return rendered
    deployment = require(rendered, "Deployment", CUSTOM_CERTS_DEPLOYMENT,
                         "controller-custom-certs")
    pod = pod_template_spec(deployment)
    containers = pod.get("containers") or []
    if not containers:
        raise TransformError("controller-custom-certs: the controller Deployment of this "
                             "release has no container")
    volume_name = CUSTOM_CERTS_PREFIX + certs.name
    source: dict[str, Any] = (
        {"configMap": {"name": certs.name}} if certs.type == "ConfigMap"
        else {"secret": {"secretName": certs.name}})
    _upsert(pod, "volumes", {"name": volume_name, **source})
    _upsert(containers[0], "volumeMounts",
            {"name": volume_name, "mountPath": CUSTOM_CERTS_MOUNT_PATH})
    _upsert(containers[0], "env", {"name": CUSTOM_CERTS_ENV, "value": CUSTOM_CERTS_MOUNT_PATH})
    return rendered


def _upsert(parent: dict, key: str, item: dict) -> None:
    """Replaces the list entry with item's name, or appends item."""
    items = list(parent.get(key) or [])
    for i, existing in enumerate(items):
        if existing.get("name") == item["name"]:
            items[i] = item
            break
    else:
        items.append(item)
    parent[key] = items
