"""spec.config: what the user writes for the operator's ConfigMapTransform
(pkg/reconciler/common/config_maps.go); knative.transforms.config merges it."""

from __future__ import annotations

# `config`: ConfigMap name (the `config-` prefix optional) -> key -> value.
ConfigData = dict[str, dict[str, str]]
