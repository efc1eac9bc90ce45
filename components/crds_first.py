"""A component's CRDs applied and held by one step (fleet.crds_first says why):
`CustomResourceDefinitionsFirst`, one dynamic resource per component, after the install
namespace; everything of the component that needs its CRDs depends on it.

Create applies every CRD (server-side apply, the fleet's field manager, forced), waits
until each is Established and records a digest of the fields it applied to each; update
does the same when the CRDs it holds change (an upgrade, a CRD a release adds) or a
refresh found them drifted. A refresh (`read`) names the CRDs whose applied fields changed
or that are gone. Its delete keeps the CRDs unless `deleteCrdsOnDestroy` says otherwise.
It holds how to reach the spoke (no credential: the exec plugin runs at apply time),
marked secret. The steps themselves are in `lifecycle.crds_first`.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import DiffResult, UpdateResult

from components.dynamic_provider import HoldingProvider
from core.crd_manifest import DELETE_ON_DESTROY
from core.resource_types import CRDS_FIRST


# Stack states name this class (`components.crds_first._Provider`): it keeps its module
# and name (components.dynamic_provider says why).
class _Provider(HoldingProvider):
    kind = CRDS_FIRST

    def apply(self, props: dict[str, Any]) -> dict[str, Any]:
        from lifecycle import crds_first

        return crds_first.apply_crds(props)

    def read_drift(self, props: dict[str, Any]) -> list[dict[str, str]]:
        from lifecycle import crds_first

        return crds_first.read_drift(props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update also when the state records no digests of what was applied (a step
        an earlier release created)."""
        result = super().diff(_id, olds, news)
        if "applied" not in olds:
            return DiffResult(changes=True, replaces=[], delete_before_replace=False)
        return result

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        from lifecycle import crds_first

        recorded = crds_first.apply_crds(news)
        if news.get(DELETE_ON_DESTROY):
            gone = sorted(set(olds.get("crds") or []) - set(news.get("crds") or []))
            crds_first.delete_crds(news, gone)
        return UpdateResult(outs={**self.outs(news), **recorded})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Keeps the CRDs, unless the entry deletes them on destroy."""
        from lifecycle import crds_first

        if props.get(DELETE_ON_DESTROY):
            crds_first.delete_crds(props)


class CustomResourceDefinitionsFirst(pulumi.dynamic.Resource, module="knative-fleet",
                                     name=CRDS_FIRST.name):
    """Applies and holds a component's CRDs (module docstring)."""

    digest: pulumi.Output[str]

    def __init__(self, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: fleet.crds_first.step_inputs, its connection marked secret here."""
        super().__init__(
            _Provider(), name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
