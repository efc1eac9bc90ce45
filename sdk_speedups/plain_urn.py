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
any other input takes the SDK's function. Installed by `sdk_speedups.registry` only
over the SDK function it was checked against (pulumi 3.259.0);
`KNATIVE_FLEET_SDK_URN=sdk` keeps the SDK's.
"""

from __future__ import annotations

from typing import Any

from sdk_speedups.wrapping import Function, Wraps


def plain_create_urn(sdk: Function) -> Function:
    """The SDK's `create_urn` wrapped: a URN of plain strings is made as a string, any
    other takes `sdk` (module docstring)."""
    from pulumi import Output
    from pulumi.runtime import settings

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

    return create_urn


WRAPS = Wraps("pulumi.runtime.resource", {"create_urn": plain_create_urn})
sdk_functions = WRAPS.sdk_functions
installed = WRAPS.installed
install = WRAPS.install
