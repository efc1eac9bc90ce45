"""spec.namespace: the model of the operator's NamespaceConfigurationTransform
(pkg/reconciler/common/namespace.go), fed by CommonSpec.NamespaceConfiguration, whose
JSON key is `namespace` (pkg/apis/operator/base/common.go). `namespaceConfiguration`,
the key stacks written before used, is still accepted as a deprecated spelling; an entry
with both is refused (ComponentSpec.not_both_namespace_spellings).
knative.install_namespace builds the install namespace from it."""

from __future__ import annotations

from core.strict import Strict


class NamespaceConfiguration(Strict):
    """`namespace`: labels and annotations of the install namespace."""

    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
