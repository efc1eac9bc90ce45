"""A component's CRDs applied in one step before their typed resources (fleet.crds_first
says why): `CustomResourceDefinitionsFirst`, one dynamic resource per component, after
the install namespace; the component's typed `CustomResourceDefinition` resources depend
on it and, when the stack has none of them yet, import what it applied.

Create applies every CRD (server-side apply, the fleet's field manager, forced) and
waits until each is Established; update does the same when the CRDs it holds change
(an upgrade, a CRD a release adds), before the typed resources are diffed. Its delete
does nothing: the typed resources, deleted before it, delete or keep the CRDs as
`deleteCrdsOnDestroy` says. It holds how to reach the spoke (no credential: the exec
plugin runs at apply time), marked secret. The step itself is in `lifecycle.crds_first`.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, UpdateResult

from components.dynamic_provider import DynamicProvider
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

        crds_first.apply_crds(props)
        return super().create(props)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        from lifecycle import crds_first

        crds_first.apply_crds(news)
        return super().update(_id, olds, news)


class CustomResourceDefinitionsFirst(pulumi.dynamic.Resource, module="knative-fleet",
                                     name=CRDS_FIRST.name):
    """Applies a component's CRDs before their typed resources (module docstring)."""

    def __init__(self, name: str, inputs: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> None:
        """`inputs`: fleet.crds_first.step_inputs, its connection marked secret here."""
        super().__init__(
            _Provider(), name,
            {**inputs, "connection": pulumi.Output.secret(inputs["connection"])},
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["connection"])))
