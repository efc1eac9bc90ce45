"""spec.sinkBindingSelectionMode: the operator's SinkBindingSelectionModeTransform
(pkg/reconciler/knativeeventing/common/sinkbindingselectionmode.go).

Which namespaces and objects the SinkBinding webhook considers
(models.sink_binding_selection_mode). Eventing only: a Serving spec is left alone.

The operator runs it among KnativeEventing's extra transformers (knativeeventing.go
`transform`), after the workload overrides: the spec value wins over a `workloads[].env`
SINK_BINDING_SELECTION_MODE, and when the spec leaves the key unset, the mode is read
from those overrides (sinkBindingSelectionModeFromWorkloadOverrides), else `exclusion`.
"""

from __future__ import annotations

from core.errors import TransformError
from knative.objects import Rendered, dig, find, require, upsert_by_name
from models.component import ComponentSpec
from models.sink_binding_selection_mode import SINK_BINDING_SELECTION_MODES

SINK_BINDING_ENV = "SINK_BINDING_SELECTION_MODE"
EVENTING_WEBHOOK = "eventing-webhook"
# What the operator sets when neither the spec nor a workload env names a mode (the
# release's value too).
DEFAULT_SINK_BINDING_SELECTION_MODE = "exclusion"


def mode_from_workload_env(spec: ComponentSpec) -> str | None:
    """The operator's sinkBindingSelectionModeFromWorkloadOverrides: the value of the first
    SINK_BINDING_SELECTION_MODE in the env of container `eventing-webhook` of an entry
    named `eventing-webhook`, looking through `workloads` first, then the deprecated
    `deployments` (the operator's append(Workloads, DeploymentOverride...)). None when no
    entry names the var; "" when the first one that does has no `value`."""
    for override in [*spec.workloads, *spec.deployments]:
        if override.name != EVENTING_WEBHOOK:
            continue
        for env in override.env:
            if env.container != EVENTING_WEBHOOK:
                continue
            for var in env.env_vars:
                if var.name == SINK_BINDING_ENV:
                    return var.value or ""
    return None


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """Like the operator, sets SINK_BINDING_SELECTION_MODE on every container of the
    eventing-webhook Deployment, replacing the value there (the release's, or one a
    `workloads` entry set) in place or adding it. Runs after `workloads`
    (knative.transforms.TRANSFORMS), so a spec value wins over a workload's env.

    Unset, the mode is the operator's too: the `workloads[]`/`deployments[]` env value
    for container eventing-webhook (mode_from_workload_env; an empty one counts as
    none), else `exclusion`; every container gets it. That also holds where `workloads`
    applied another value: two entries naming the var give the first one's, not the
    last one's. A value taken from the workload env is passed on unchecked, as the
    operator does (the webhook treats all but `inclusion` as `exclusion`).

    A var of the Deployment that gets its value from `valueFrom` is an error: the
    operator sets a value on it and keeps the valueFrom, which Kubernetes refuses.
    """
    if "sink_binding_selection_mode" not in type(spec).model_fields:
        return rendered  # Serving has no such key
    mode = spec.sink_binding_selection_mode
    if mode is None:
        deployment = find(rendered.namespaced, "Deployment", EVENTING_WEBHOOK)
        if deployment is None:
            return rendered  # as in the operator, nothing to set it on
        mode = mode_from_workload_env(spec) or DEFAULT_SINK_BINDING_SELECTION_MODE
        containers = dig(deployment, ("spec", "template", "spec", "containers")) or []
    else:
        if mode not in SINK_BINDING_SELECTION_MODES:
            raise TransformError(f"sinkBindingSelectionMode must be one of "
                                 f"{', '.join(SINK_BINDING_SELECTION_MODES)}, got {mode!r}")
        deployment = require(rendered.namespaced, "Deployment", EVENTING_WEBHOOK,
                             why="sinkBindingSelectionMode",
                             hint="check the Eventing release files loaded")
        containers = dig(deployment, ("spec", "template", "spec", "containers")) or []
        if not containers:
            raise TransformError(f"sinkBindingSelectionMode: the {EVENTING_WEBHOOK} Deployment "
                                 "of this release has no container")
    for container in containers:
        for var in container.get("env") or []:
            if var.get("name") == SINK_BINDING_ENV and "valueFrom" in var:
                raise TransformError(
                    f"{EVENTING_WEBHOOK} container {container.get('name')!r} takes "
                    f"{SINK_BINDING_ENV} from valueFrom; the operator sets the selection mode "
                    f"as a value on it too, which Kubernetes refuses (value and valueFrom); "
                    f"give the var a `value` in workloads[].env, or set "
                    f"sinkBindingSelectionMode instead")
        upsert_by_name(container, "env", {"name": SINK_BINDING_ENV, "value": mode})
    return rendered
