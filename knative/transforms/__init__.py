"""The Knative Operator's transformers (pkg/reconciler/common/), one module per spec key
(named after it), each applying the key's model from models/; `TRANSFORMS` is the index
of what runs, in which order (the operator's pkg/reconciler/common/transformers.go).

Every transform is `transform(rendered, spec) -> rendered`: it reads its own key off the
spec, changes the rendered release objects in place and returns them; a key the spec
does not have (a Serving-only key on Eventing) or leaves unset changes nothing. The spec
keys that change no rendered object are applied elsewhere in knative/: `manifests`,
`additionalManifests` and `source` pick the files (component_files.py), `version` is
checked against what a spoke runs (version_step.py), and `namespace` shapes the install
namespace (install_namespace.py).
"""

from __future__ import annotations

from collections.abc import Callable

from knative.objects import Rendered
from knative.transforms import (
    config,
    controller_custom_certs,
    default_broker_class,
    high_availability,
    ingress,
    pod_disruption_budgets,
    registry,
    services,
    sink_binding_selection_mode,
    workloads,
)
from models.component import ComponentSpec

Transform = Callable[[Rendered, ComponentSpec], Rendered]

# The order is behaviour: `registry` before `config`, so that an explicit
# `config.deployment.queue-sidecar-image` wins over the registry's image;
# `high-availability` before `workloads`, so that a workload's own replicas win;
# `workloads` before `controller-custom-certs`, so that SSL_CERT_DIR comes after the
# workload's env on the Serving controller; `config` before `defaultBrokerClass`, so
# that the class is written into the config-br-defaults that `config` left; `workloads`
# before `sinkBindingSelectionMode`, so that the spec's mode wins over a workload's env.
# The operator's transformers.go keeps the same rules (ImageTransform before
# ConfigMapTransform, HighAvailabilityTransform before OverridesTransform), and the
# per-component "extra" transformers (knativeserving.go / knativeeventing.go
# `transform`: KnativeServing's CustomCertsTransform, KnativeEventing's
# DefaultBrokerConfigMapTransform then SinkBindingSelectionModeTransform) run after all
# of those.
TRANSFORMS: tuple[Transform, ...] = (
    registry.transform,
    config.transform,
    ingress.transform,
    high_availability.transform,
    workloads.transform,
    controller_custom_certs.transform,
    services.transform,
    pod_disruption_budgets.transform,
    default_broker_class.transform,
    sink_binding_selection_mode.transform,
)
