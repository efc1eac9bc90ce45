"""spec.sinkBindingSelectionMode: the operator's SinkBindingSelectionModeTransform
(pkg/reconciler/knativeeventing/common/sinkbindingselectionmode.go).

Which namespaces and objects the SinkBinding webhook considers (`inclusion`: only those
labelled bindings.knative.dev/include=true; `exclusion`: all but those labelled
bindings.knative.dev/exclude=true). Eventing only: a spec without the key is left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from core.errors import TransformError
from knative.manifests import Rendered
from knative.objects import dig, require, upsert_by_name

if TYPE_CHECKING:
    from knative.spec.component import ComponentSpec

SinkBindingSelectionMode = Literal["inclusion", "exclusion"]
SINK_BINDING_SELECTION_MODES: tuple[str, ...] = get_args(SinkBindingSelectionMode)
SINK_BINDING_ENV = "SINK_BINDING_SELECTION_MODE"
EVENTING_WEBHOOK = "eventing-webhook"


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Like the operator, sets SINK_BINDING_SELECTION_MODE on every container of the
    eventing-webhook Deployment, replacing the release value or adding it. Unset leaves
    the release value (`exclusion`, the operator's default too)."""
    mode = getattr(spec, "sink_binding_selection_mode", None)
    if mode is None:
        return rendered
    if mode not in SINK_BINDING_SELECTION_MODES:
        raise TransformError(f"sinkBindingSelectionMode must be one of "
                             f"{', '.join(SINK_BINDING_SELECTION_MODES)}, got {mode!r}")
    deployment = require(rendered.namespaced, "Deployment", EVENTING_WEBHOOK,
                         why="sinkBindingSelectionMode",
                         hint="check the Eventing release files loaded")
    containers = dig(deployment, ("spec", "template", "spec", "containers")) or []
    if not containers:
        raise TransformError(f"sinkBindingSelectionMode: the {EVENTING_WEBHOOK} Deployment of "
                             "this release has no container")
    for container in containers:
        upsert_by_name(container, "env", {"name": SINK_BINDING_ENV, "value": mode})
    return rendered
