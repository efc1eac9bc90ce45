"""How a speed-up puts its wrappers in the place of SDK functions.

Each wrapper is made from the SDK's own function and keeps it on itself as
`sdk_<name>`. Whether the speed-up is installed, and the SDK's own function whether or
not it is, are then read from the SDK module as it is now: whoever puts the SDK's
function back (a test) has nothing else to undo. The speed-ups that replace a function
outright instead (`outputs_wait`, `stack_trace`) tell theirs by identity.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Function = Callable[..., Any]
# Given the SDK's own function, the function put in its place.
Wrapper = Callable[[Function], Function]


def kept_as(name: str) -> str:
    """The wrapper's attribute holding the SDK's own function `name`."""
    return f"sdk_{name}"


@dataclass(frozen=True)
class Wraps:
    """The functions of one SDK module a speed-up wraps, each with what makes its
    wrapper; its methods are the speed-up module's `sdk_functions`, `installed` and
    `install` (sdk_speedups/registry.py)."""

    module: str
    wrappers: Mapping[str, Wrapper]

    def sdk_functions(self) -> dict[str, Function]:
        """The SDK's own function of each name, whether or not it was wrapped."""
        module = importlib.import_module(self.module)
        own = {}
        for name in self.wrappers:
            current = getattr(module, name)
            own[name] = getattr(current, kept_as(name), current)
        return own

    def installed(self) -> bool:
        """Whether the first wrapper is in place: `install` puts them all at once."""
        name = next(iter(self.wrappers))
        return hasattr(getattr(importlib.import_module(self.module), name), kept_as(name))

    def install(self) -> None:
        """Puts each wrapper in the place of the SDK's function, once."""
        if self.installed():
            return
        module = importlib.import_module(self.module)
        for name, sdk in self.sdk_functions().items():
            wrapper = self.wrappers[name](sdk)
            setattr(wrapper, kept_as(name), sdk)
            setattr(module, name, wrapper)
