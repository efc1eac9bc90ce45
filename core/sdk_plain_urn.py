"""A URN made of plain strings, computed as a string.

For every resource it registers, the SDK computes the resource's URN with
`pulumi.runtime.resource.create_urn` (for a test run without an engine, which needs
one; the engine computes its own otherwise), and that function always goes through
`Output.from_input`, `Output.all` and `apply`: a dozen futures and loop callbacks per
resource, about 13 % of the program's time under mocks, for a string that is known
from the start.

When the name, the type and the parent URN are plain strings (as they are for every
registration), `create_urn` below builds the same string the SDK's `apply` builds and
returns it as a known, non-secret Output without resources, as the SDK's result is;
any other input takes the SDK's function. Installed only over the SDK function it was
checked against (pulumi 3.259.0, by the sha256 of its source);
`KNATIVE_FLEET_SDK_URN=sdk` keeps the SDK's.
"""

from __future__ import annotations

from typing import Any

from core.sdk_review import may_replace, source_sha256

SDK_URN_ENV = "KNATIVE_FLEET_SDK_URN"
# sha256 of `inspect.getsource(pulumi.runtime.resource.create_urn)` in pulumi 3.259.0.
REVIEWED_SOURCE_SHA256 = "b4efa209c920a83ac0a652e3f00fa7e987bdb7e438231fc88146f4c372c85596"


def _sdk_create_urn() -> Any:
    from pulumi.runtime import resource

    return getattr(resource.create_urn, "sdk_create_urn", resource.create_urn)


def sdk_source_sha256() -> str:
    return source_sha256(_sdk_create_urn())


def use_plain_urn(environ: dict[str, str] | None = None) -> bool:
    """Wraps the SDK's `create_urn` in `pulumi.runtime.resource` (module docstring);
    True if it did."""
    from pulumi import Output
    from pulumi.runtime import resource, settings

    if hasattr(resource.create_urn, "sdk_create_urn"):
        return True
    sdk = resource.create_urn
    if not may_replace(SDK_URN_ENV, environ, sdk, REVIEWED_SOURCE_SHA256):
        return False

    def create_urn(name: Any, type_: Any, parent: Any = None, project: str | None = None,
                   stack: str | None = None) -> Any:
        if type(name) is not str or type(type_) is not str or (
                parent is not None and type(parent) is not str):
            return sdk(name, type_, parent, project, stack)
        if parent is not None:
            prefix = parent[0:parent.rfind("::")] + "$"
        else:
            prefix = ("urn:pulumi:" + (settings.get_stack() if stack is None else stack)
                      + "::" + (settings.get_project() if project is None else project)
                      + "::")
        return Output.from_input(prefix + type_ + "::" + name)

    create_urn.sdk_create_urn = sdk  # type: ignore[attr-defined]
    resource.create_urn = create_urn
    return True
