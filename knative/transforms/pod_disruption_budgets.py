"""spec.podDisruptionBudgets: the operator's PodDisruptionBudgetsTransform
(pkg/reconciler/common/poddisruptionbudget_override.go).

minAvailable or maxUnavailable of one release PodDisruptionBudget, by name. The operator
sets both fields from the override (v0.48.1: `Spec.MinAvailable = override.MinAvailable`,
`Spec.MaxUnavailable = override.MaxUnavailable`), so the one given is applied and the
other cleared; it refuses both at once, as the model (models.pod_disruption_budgets)
does. Unlike the operator, which skips what it cannot match (and an override with
neither), a name the release does not have is a `TransformError` that lists the known
names, and an override with neither is refused.
"""

from __future__ import annotations

from knative.objects import Rendered, named_objects
from models.component import ComponentSpec


def transform(rendered: Rendered, spec: ComponentSpec) -> Rendered:
    """The named PDB gets the given minAvailable or maxUnavailable and loses the other (a
    PDB takes only one), as the operator's PodDisruptionBudgetsTransform does."""
    for override, pdb in named_objects(rendered, "PodDisruptionBudget",
                                       spec.pod_disruption_budgets, "podDisruptionBudgets"):
        pdb_spec = pdb.setdefault("spec", {})
        if override.min_available is not None:
            pdb_spec["minAvailable"] = override.min_available
            pdb_spec.pop("maxUnavailable", None)
        else:
            pdb_spec["maxUnavailable"] = override.max_unavailable
            pdb_spec.pop("minAvailable", None)
    return rendered
