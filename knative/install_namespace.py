"""The install namespace of a component, with spec.namespace applied: the operator's
NamespaceConfigurationTransform (pkg/reconciler/common/namespace.go), fed by
CommonSpec.NamespaceConfiguration (models.namespace).

Render drops the release's Namespace objects; the install namespace is this object,
created with the entry's labels and annotations, and only when knative-fleet creates the
namespace: an existing namespace that is not ours is never modified or deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from models.component import ComponentSpec


def namespace_is_ours(labels: dict[str, str] | None) -> bool:
    """A namespace this product created carries its managed-by label; any other
    existing namespace belongs to someone else and is never modified or deleted."""
    return labels is None or labels.get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE


def namespace_object(name: str, spec: ComponentSpec, release: Mapping[str, Any] | None = None,
                     extra_labels: Mapping[str, str] | None = None) -> dict:
    """The install namespace as the operator leaves it: the labels and annotations of the
    release's last Namespace object (`release`, Rendered.namespace_metadata), the entry's
    on top (NamespaceConfigurationTransform), then `extra_labels` (the operator's
    app.kubernetes.io/name) and ours."""
    settings = spec.namespace_settings()
    release = release or {}
    labels = {**(release.get("labels") or {}), **settings.labels, **(extra_labels or {})}
    labels[MANAGED_BY_LABEL] = MANAGED_BY_VALUE
    metadata: dict = {"name": name, "labels": labels}
    annotations = {**(release.get("annotations") or {}), **settings.annotations}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
