"""spec.controller-custom-certs: the operator's CustomCertsTransform
(pkg/reconciler/knativeserving/common/certs.go).

A ConfigMap or Secret of CA certs the Serving controller trusts when it resolves image
digests (registries with self-signed certs). Serving only: a spec without the key is left
alone.

The operator runs CustomCertsTransform among KnativeServing's extra transformers, which
come after the common ones (pkg/reconciler/knativeserving/knativeserving.go `transform`,
pkg/reconciler/common/transformers.go), so after OverridesTransform; and it appends
SSL_CERT_DIR to the first container's env. Here too it runs after `workloads`
(knative.transforms.TRANSFORMS) and SSL_CERT_DIR comes last: release env, then the
`workloads` env (merged in place or appended), then SSL_CERT_DIR.
"""

from __future__ import annotations

from typing import Any

from core.errors import TransformError
from knative.objects import Rendered, all_objects, pod_template_spec, require, upsert_by_name
from models.component import ComponentSpec
from models.controller_custom_certs import CUSTOM_CERTS_PREFIX, ControllerCustomCerts

CUSTOM_CERTS_DEPLOYMENT = "controller"
CUSTOM_CERTS_ENV = "SSL_CERT_DIR"
CUSTOM_CERTS_MOUNT_PATH = "/custom-certs"


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """The custom certs on the Serving `controller` Deployment.

    Adds volume `custom-certs-<name>` (the ConfigMap or Secret), mounts it at
    /custom-certs in the first container and appends SSL_CERT_DIR=/custom-certs to its
    env, so the controller trusts registries signed by those CAs. Volume and mount of the
    same name are replaced rather than duplicated; an SSL_CERT_DIR already there (from
    `workloads`) is dropped before ours is appended: the operator appends a second one,
    and the last of two wins in Kubernetes, so the effective env and its order are the
    operator's without the shadowed duplicate. Applying it twice changes nothing.
    """
    certs: ControllerCustomCerts | None = getattr(spec, "controller_custom_certs", None)
    if certs is None:
        return rendered
    deployment = require(all_objects(rendered), "Deployment", CUSTOM_CERTS_DEPLOYMENT,
                         why="controller-custom-certs",
                         hint="check that the release files loaded are the ones for this "
                              "ingress and version")
    pod = pod_template_spec(deployment)
    containers = pod.get("containers") or []
    if not containers:
        raise TransformError("controller-custom-certs: the controller Deployment of this "
                             "release has no container")
    volume_name = CUSTOM_CERTS_PREFIX + certs.name
    source: dict[str, Any] = (
        {"configMap": {"name": certs.name}} if certs.type == "ConfigMap"
        else {"secret": {"secretName": certs.name}})
    upsert_by_name(pod, "volumes", {"name": volume_name, **source})
    upsert_by_name(containers[0], "volumeMounts",
                   {"name": volume_name, "mountPath": CUSTOM_CERTS_MOUNT_PATH})
    first = containers[0]
    first["env"] = [*(e for e in first.get("env") or [] if e.get("name") != CUSTOM_CERTS_ENV),
                    {"name": CUSTOM_CERTS_ENV, "value": CUSTOM_CERTS_MOUNT_PATH}]
    return rendered

