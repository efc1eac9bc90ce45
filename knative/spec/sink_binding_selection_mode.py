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
    deployment = next((o for o in rendered.namespaced if o.get("kind") == "Deployment"
                       and o["metadata"].get("name") == EVENTING_WEBHOOK), None)
    if deployment is None:
        raise TransformError(f"sinkBindingSelectionMode changes the Deployment "
                             f"{EVENTING_WEBHOOK!r}, which this release does not have; check "
                             "the Eventing release files loaded")
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec")
                  or {}).get("containers") or []
    if not containers:
        raise TransformError(f"sinkBindingSelectionMode: the {EVENTING_WEBHOOK} Deployment of "
                             "this release has no container")
    for container in containers:
        env = list(container.get("env") or [])
        for i, var in enumerate(env):
            if var.get("name") == SINK_BINDING_ENV:
                env[i] = {"name": SINK_BINDING_ENV, "value": mode}
                break
        else:
            env.append({"name": SINK_BINDING_ENV, "value": mode})
        container["env"] = env
    return rendered
