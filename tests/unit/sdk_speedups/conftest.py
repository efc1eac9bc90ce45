"""The SDK as it ships for every test here (`sdk_own`), a speed-up installed through
the registry with given settings (`use_speedup`), and a way to simulate a new SDK
against the registry's declarations (`sdk_changed`)."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping

import pytest
from pulumi.runtime import resource

from core.settings import settings
from sdk_speedups import registry


@pytest.fixture(autouse=True)
def sdk_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SDK function a speed-up replaces is the SDK's own during each test, and is
    put back as it was after it: a test may install any speed-up."""
    for speedup in registry.SPEEDUPS:
        own = registry.module_of(speedup).sdk_functions()
        for function in speedup.replaces:
            monkeypatch.setattr(importlib.import_module(function.module), function.name,
                                own[function.name])
    # kept by the stack trace speed-up when installed; removed after the test if new
    monkeypatch.setattr(resource, "_sdk_get_stack_trace",
                        registry.module_of(registry.by_name("stack_trace"))
                        .sdk_functions()["_get_stack_trace"], raising=False)


@pytest.fixture()
def use_speedup() -> Callable[[str, Mapping[str, str]], bool]:
    """`use_speedup(name, environ)`: installs that speed-up as the program would with
    the settings of `environ`; True if it is in place."""

    def use(name: str, environ: Mapping[str, str]) -> bool:
        return registry.install(name, settings(environ)).installed

    return use


@pytest.fixture()
def sdk_changed(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], None]:
    """`sdk_changed(speedup, function)`: the registry's reviewed sha256 of that SDK
    function no longer matches, as after an SDK upgrade that changed it."""

    def change(speedup: str, function: str) -> None:
        def changed(declared: registry.SdkFunction) -> registry.SdkFunction:
            return (dataclasses.replace(declared, sha256="0" * 64)
                    if declared.name == function else declared)

        new = tuple(dataclasses.replace(s, replaces=tuple(map(changed, s.replaces)),
                                        mirrors=tuple(map(changed, s.mirrors)))
                    if s.name == speedup else s for s in registry.SPEEDUPS)
        monkeypatch.setattr(registry, "SPEEDUPS", new)

    return change
