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
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, UpdateResult

from components.dynamic_provider import DynamicProvider
from core.crd_manifest import DELETE_ON_DESTROY
from core.resource_types import CRDS_FIRST


# Stack states name this class (`components.crds_first._Provider`): it keeps its module
# and name (components.dynamic_provider says why).
class _Provider(DynamicProvider):
    kind = CRDS_FIRST

    def outs(self, props: dict[str, Any]) -> dict[str, Any]:
        """The inputs without the CRD bodies: the state holds them once, as inputs."""
        return {k: v for k, v in props.items() if k != "manifest"}

    def create(self, props: dict[str, Any]) -> CreateResult:
        from lifecycle import crds_first

        recorded = crds_first.apply_crds(props)
        return CreateResult(id_=self.resource_id(props), outs={**self.outs(props), **recorded})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        """An update also when a refresh found drift (in the state, or in the inputs a
        refresh gives back), or the state records no digests of what was applied (a step
        an earlier release created)."""
        result = super().diff(_id, olds, news)
        if olds.get("drifted") or news.get("drifted") or "applied" not in olds:
            return DiffResult(changes=True, replaces=[], delete_before_replace=False)
        return result

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        from lifecycle import crds_first

        recorded = crds_first.apply_crds(news)
        if news.get(DELETE_ON_DESTROY):
            gone = sorted(set(olds.get("crds") or []) - set(news.get("crds") or []))
            crds_first.delete_crds(news, gone)
        return UpdateResult(outs={**self.outs(news), **recorded})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """A refresh: the outputs as they were, with the CRDs that drifted. With drift,
        the inputs say so too: the engine reports a refresh as a change (`update`, what
        `make drift` reads) only when the inputs it gets back differ; the next `up`
        registers the program's inputs again."""
        from lifecycle import crds_first

        drifted = crds_first.read_drift(props)
        outs = {**props, "drifted": drifted}
        if not drifted:
            return ReadResult(id_=id_, outs=outs)
        inputs = {k: v for k, v in props.items() if k not in ("applied", "selector")}
        return ReadResult(id_=id_, outs=outs, inputs={**inputs, "drifted": drifted})

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
