"""spec.sinkBindingSelectionMode: the model of the operator's
SinkBindingSelectionModeTransform
(pkg/reconciler/knativeeventing/common/sinkbindingselectionmode.go);
knative.transforms.sink_binding_selection_mode applies it. Eventing only.

Which namespaces and objects the SinkBinding webhook considers (`inclusion`: only those
labelled bindings.knative.dev/include=true; `exclusion`: all but those labelled
bindings.knative.dev/exclude=true).
"""

from __future__ import annotations

from typing import Literal, get_args

SinkBindingSelectionMode = Literal["inclusion", "exclusion"]
SINK_BINDING_SELECTION_MODES: tuple[str, ...] = get_args(SinkBindingSelectionMode)
