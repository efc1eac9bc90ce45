"""Every SDK speed-up of the program, declared once, guarded and installed here.

Each module of this package puts its own version of one or more functions of the pinned
Pulumi Python SDK in place, written against that SDK's source and checked by its unit
tests to give the same result. A new SDK may change a function replaced, or an SDK
internal the replacement reads, and the program would then run old SDK code on a new
SDK. So each speed-up is declared here once: the SDK functions it replaces (or whose
result it gives) with the sha256 of the source of each as reviewed, and every SDK name
outside the public API it relies on, with the kind of object that name must be.

`install` puts a speed-up in place only when every hash matches and every name is there
as its kind. Otherwise it prints one line on stderr naming the speed-up and what
changed, and the SDK's own code runs: the same results, the program's time as before
the speed-up (docs/sdk-speedups.md). A speed-up the user turned off
(`KNATIVE_FLEET_SDK_SPEEDUPS=off`, which wins, or its own `KNATIVE_FLEET_SDK_<NAME>`) is
left out without a word.

A speed-up module provides `sdk_functions()` (the SDK's own function for each name it
declares, whether or not it is installed), `installed()`, and `install()` (unguarded,
idempotent: only this module calls it, after the guard); one that wraps SDK functions
takes all three from `sdk_speedups.wrapping.Wraps`.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from core.settings import Settings, settings, variable

REVIEWED_SDK = "3.259.0"  # the pulumi release every hash below was taken from

Kind = Literal["callable", "class", "str", "list", "set", "lock", "present"]
KINDS: dict[str, Callable[[Any], bool]] = {
    "callable": callable,
    "class": inspect.isclass,
    "str": lambda value: isinstance(value, str),
    "list": lambda value: isinstance(value, list),
    "set": lambda value: isinstance(value, set),
    "lock": lambda value: hasattr(value, "__enter__") and hasattr(value, "__exit__"),
    "present": lambda value: True,  # any value, None included
}


@dataclass(frozen=True)
class SdkPath:
    """A name in an SDK module, as the guard's messages spell it (`module.name`)."""

    module: str
    name: str

    @property
    def path(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(frozen=True)
class SdkFunction(SdkPath):
    """An SDK function and the sha256 of `inspect.getsource` of it in REVIEWED_SDK."""

    sha256: str


@dataclass(frozen=True)
class SdkName(SdkPath):
    """An SDK name outside its public API that a speed-up reads or calls, and the kind
    it must be. `name` may be dotted; a `getter()` step in it calls that getter (no
    side effects)."""

    kind: Kind


@dataclass(frozen=True)
class Speedup:
    """One speed-up: its module, the SDK functions it replaces, those whose result it
    gives without replacing them (`mirrors`), the SDK names it uses, and the settings
    field whose value `keep_sdk` keeps the SDK's own."""

    name: str
    replaces: tuple[SdkFunction, ...]
    uses: tuple[SdkName, ...]
    switch: str
    keep_sdk: object = "sdk"
    mirrors: tuple[SdkFunction, ...] = ()

    @property
    def module(self) -> str:
        return f"sdk_speedups.{self.name}"

    @property
    def functions(self) -> tuple[SdkFunction, ...]:
        """Every SDK function whose source the guard hashes."""
        return self.replaces + self.mirrors

    @property
    def reviewed_sha256(self) -> dict[str, str]:
        return {f.name: f.sha256 for f in self.functions}


@dataclass(frozen=True)
class Installed:
    """Whether one part of the program's runtime is in place, and why not."""

    name: str
    installed: bool
    reason: str = ""  # the setting that turned it off, or what changed in the SDK

    def __str__(self) -> str:
        return f"{self.name}: " + ("installed" if self.installed
                                   else f"not installed ({self.reason})")


@dataclass(frozen=True)
class Report:
    """What `install_all` (or the program's runtime) put in place, in order."""

    entries: tuple[Installed, ...]

    def __iter__(self) -> Iterator[Installed]:
        return iter(self.entries)

    def __getitem__(self, name: str) -> Installed:
        return next(e for e in self.entries if e.name == name)

    @property
    def not_installed(self) -> list[Installed]:
        return [e for e in self.entries if not e.installed]

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.entries)


_RPC = "pulumi.runtime.rpc"
_RESOURCE = "pulumi.runtime.resource"
_SETTINGS = "pulumi.runtime.settings"
_SOURCE_PB2 = "pulumi.runtime.proto.source_pb2"

# In the order the program installs them.
SPEEDUPS: tuple[Speedup, ...] = (
    Speedup(
        name="debug",
        replaces=(SdkFunction("pulumi.log", "debug",
                              "381cd6115cca6ca19ddc9416014d9afb086d7b7a9cb3ca8d80f2be24bdb44d6f"),),
        uses=(),
        switch="sdk_debug", keep_sdk=True),
    Speedup(
        name="outputs_wait",
        replaces=(SdkFunction("pulumi.runtime.stack", "wait_for_rpcs",
                              "c92289a2f839f5221a4068c262a706a05ce2af506b5484545ac5d371b6211e48"),),
        uses=(SdkName(_SETTINGS, "_get_rpc_manager", "callable"),
              SdkName(_SETTINGS, "_get_rpc_manager().rpcs", "list"),
              SdkName(_SETTINGS, "_get_rpc_manager().unhandled_exception", "present"),
              SdkName(_SETTINGS, "_get_rpc_manager().exception_traceback", "present"),
              SdkName(_SETTINGS, "SETTINGS.lock", "lock"),
              SdkName(_SETTINGS, "SETTINGS.outputs", "set"),
              SdkName("pulumi.runtime.stack", "ResourceRegistrationFailed", "class")),
        switch="sdk_wait"),
    Speedup(
        name="plain_values",
        replaces=(SdkFunction(_RPC, "serialize_property",
                              "2d945490836b9c6822e8814f2b70ec5161ac6e729e21e08d3ed9cf626a4b39d6"),),
        uses=(SdkName("pulumi.resource", "Resource.translate_input_property", "callable"),),
        switch="sdk_serialize"),
    Speedup(
        name="kept_outputs",
        replaces=(SdkFunction(_RPC, "transfer_properties",
                              "0e7c02ffa04ff20b31cd58a4829188d173300ed40eae0cb7bb48435121c233d9"),
                  SdkFunction(_RPC, "resolve_outputs",
                              "18f65c1be3ad95f4d7f679ac3f75c555e3eef738627e50fd0146440477d387e8")),
        uses=(SdkName(_RPC, "_special_sig_key", "str"),),
        switch="sdk_outputs"),
    Speedup(
        name="plain_urn",
        replaces=(SdkFunction(_RESOURCE, "create_urn",
                              "b4efa209c920a83ac0a652e3f00fa7e987bdb7e438231fc88146f4c372c85596"),),
        uses=(SdkName(_SETTINGS, "get_stack", "callable"),
              SdkName(_SETTINGS, "get_project", "callable")),
        switch="sdk_urn"),
    Speedup(
        name="stack_trace",
        replaces=(SdkFunction(_RESOURCE, "_get_stack_trace",
                              "3943b2273016925109e1c3a7bc603db06a44ea09ff3494c29544e44bccf8dd1f"),),
        mirrors=(SdkFunction(_RESOURCE, "_get_source_position_for_frame",
                             "9f78cc3180b00a12971fa82dd727d6e42aceec087259c9dae4f575a9d85944d2"),),
        uses=(SdkName(_SOURCE_PB2, "StackTrace", "class"),
              SdkName(_SOURCE_PB2, "StackFrame", "class"),
              SdkName(_SOURCE_PB2, "SourcePosition", "class")),
        switch="sdk_stack"),
    Speedup(
        name="provider_pickle",
        replaces=(SdkFunction("pulumi.dynamic.dynamic", "serialize_provider",
                              "1885ce68bc436f1a2b08c42c8cdba831640cd3112e7904113dc8e36146772b89"),),
        uses=(SdkName("pickle", "_Pickler._batch_setitems", "callable"),
              SdkName("pickle", "_Pickler.save_dict", "callable")),
        switch="sdk_pickle"),
)


def by_name(name: str) -> Speedup:
    return next(s for s in SPEEDUPS if s.name == name)


def module_of(speedup: Speedup) -> ModuleType:
    return importlib.import_module(speedup.module)


def source_sha256(function: Callable[..., Any]) -> str:
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()


def sdk_source_sha256(speedup: Speedup) -> dict[str, str]:
    """The sha256 of the source of each SDK function the speed-up declares, as the
    SDK in use has it (compare with `speedup.reviewed_sha256`)."""
    own = module_of(speedup).sdk_functions()
    return {f.name: source_sha256(own[f.name]) for f in speedup.functions}


def problems(speedup: Speedup) -> list[str]:
    """What differs from the reviewed SDK for this speed-up; empty when nothing does."""
    found = [p for f in speedup.functions
             if (p := _kind_problem(SdkName(f.module, f.name, "callable")))]
    if found:
        return found
    own = module_of(speedup).sdk_functions()
    for function in speedup.functions:
        try:
            got = source_sha256(own[function.name])
        except (OSError, TypeError) as exc:
            found.append(f"{function.path}: its source cannot be read ({exc})")
            continue
        if got != function.sha256:
            found.append(f"{function.path} changed (source sha256 {got[:12]}..., "
                         f"reviewed {function.sha256[:12]}...)")
    found.extend(p for name in speedup.uses if (p := _kind_problem(name)))
    return found


def _kind_problem(used: SdkName) -> str | None:
    """Why `used` is not there as its kind, or None when it is."""
    try:
        value: Any = importlib.import_module(used.module)
    except ImportError:
        return f"module {used.module} is missing"
    walked = used.module
    for step in used.name.split("."):
        attribute = step.removesuffix("()")
        walked += "." + attribute
        if not hasattr(value, attribute):
            return f"{walked} is missing"
        value = getattr(value, attribute)
        if step.endswith("()"):
            if not callable(value):
                return f"{walked} is not callable"
            value = value()
            walked += "()"
    if not KINDS[used.kind](value):
        return f"{used.path} is a {type(value).__name__}, not {used.kind}"
    return None


def turned_off(speedup: Speedup, config: Settings) -> str:
    """The setting that keeps the SDK's own function, or '' when none does."""
    if config.sdk_speedups == "off":
        return f"{variable('sdk_speedups')}=off"
    value = getattr(config, speedup.switch)
    if value == speedup.keep_sdk:
        return f"{variable(speedup.switch)}={'1' if value is True else value}"
    return ""


def install(name: str, config: Settings | None = None) -> Installed:
    """Installs one speed-up unless it is turned off or its guard fails (module
    docstring); says which."""
    speedup = by_name(name)
    config = settings() if config is None else config
    module = module_of(speedup)
    try:
        if module.installed():
            return Installed(name, True)
    except (AttributeError, ImportError):
        pass  # an SDK function it replaces is gone: the guard below says which
    off = turned_off(speedup, config)
    if off:
        return Installed(name, False, off)
    try:
        found = problems(speedup)
    except Exception as exc:  # noqa: BLE001 - a guard that cannot tell keeps the SDK's own
        found = [f"the guard failed: {exc!r}"]
    if found:
        reason = "; ".join(found)
        print(f"knative-fleet: SDK speed-up {name!r} not installed on pulumi "
              f"{_sdk_version()} (reviewed on {REVIEWED_SDK}): {reason}; the SDK's own "
              "code runs (docs/sdk-speedups.md)", file=sys.stderr)
        return Installed(name, False, reason)
    module.install()
    return Installed(name, True)


def install_all(config: Settings | None = None) -> Report:
    """Every speed-up that is on and whose guard passes, installed in order."""
    config = settings() if config is None else config
    return Report(tuple(install(s.name, config) for s in SPEEDUPS))


def _sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pulumi")
    except PackageNotFoundError:
        return "(version unknown)"
