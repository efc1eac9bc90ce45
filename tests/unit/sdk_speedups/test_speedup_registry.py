"""The registry: every speed-up installs on the pinned SDK; the one switch turns them
all off without a word; each speed-up's own switch, or an SDK function of it not the
reviewed one, leaves the SDK's functions as they are; a speed-up whose SDK is not the
reviewed one (a changed function, a missing or different private name) is left out
with one line on stderr naming it and what changed, and the others still install."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import resource, rpc
from pulumi.runtime import settings as sdk_settings

import sdk_speedups
from core.settings import settings
from sdk_speedups import registry
from sdk_speedups.registry import install_all

NAMES = [s.name for s in registry.SPEEDUPS]
SWITCHES = {"debug": ("KNATIVE_FLEET_SDK_DEBUG", "1"),
            "outputs_wait": ("KNATIVE_FLEET_SDK_WAIT", "sdk"),
            "plain_values": ("KNATIVE_FLEET_SDK_SERIALIZE", "sdk"),
            "kept_outputs": ("KNATIVE_FLEET_SDK_OUTPUTS", "sdk"),
            "plain_urn": ("KNATIVE_FLEET_SDK_URN", "sdk"),
            "stack_trace": ("KNATIVE_FLEET_SDK_STACK", "sdk"),
            "provider_pickle": ("KNATIVE_FLEET_SDK_PICKLE", "sdk")}
# Every SDK function whose source a speed-up's guard hashes, by speed-up.
GUARDED = [(s.name, f.name) for s in registry.SPEEDUPS for f in s.functions]


def _installed() -> dict[str, bool]:
    return {s.name: registry.module_of(s).installed() for s in registry.SPEEDUPS}


def _replaced(name: str) -> list[Any]:
    """The functions in the places of those the speed-up replaces, as they are now."""
    return [getattr(importlib.import_module(f.module), f.name)
            for f in registry.by_name(name).replaces]


def _replaced_are_the_sdks() -> bool:
    """Every function a speed-up replaces is the SDK's own, as it ships."""
    return all(getattr(importlib.import_module(f.module), f.name)
               is registry.module_of(s).sdk_functions()[f.name]
               for s in registry.SPEEDUPS for f in s.replaces)


def test_every_module_of_the_package_is_declared_once() -> None:
    modules = {p.stem for p in Path(sdk_speedups.__file__).parent.glob("*.py")}
    # The registry, its wrapping helper, and the runtime call that sets the collector and
    # installs the speed-ups.
    assert (sorted(modules - {"__init__", "registry", "wrapping", "runtime", "collector"})
            == sorted(NAMES))
    assert len(set(NAMES)) == len(NAMES)
    assert set(SWITCHES) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_guard_passes_on_the_pinned_sdk(name: str) -> None:
    """Fails on a new pulumi version: review the speed-up against it (docs/sdk-speedups.md),
    then its hashes and private names in sdk_speedups/registry.py."""
    speedup = registry.by_name(name)
    assert registry.problems(speedup) == []
    assert registry.sdk_source_sha256(speedup) == speedup.reviewed_sha256


def test_every_speedup_is_installed_on_the_pinned_sdk(
        capsys: pytest.CaptureFixture[str]) -> None:
    report = install_all(settings({}))
    assert [e.name for e in report] == NAMES
    assert report.not_installed == [], str(report)
    assert all(_installed().values())
    assert capsys.readouterr().err == ""
    again = install_all(settings({}))  # installing twice keeps the first
    assert again == report and not _replaced_are_the_sdks()


def test_the_one_switch_turns_every_speedup_off_silently(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the per-speed-up switches asking for the program's versions do not win over it
    given = {"KNATIVE_FLEET_SDK_SPEEDUPS": "off",
               **{var: "0" if name == "debug" else "program"
                  for name, (var, _) in SWITCHES.items()}}
    report = install_all(settings(given))
    assert [(e.name, e.installed, e.reason) for e in report] == [
        (name, False, "KNATIVE_FLEET_SDK_SPEEDUPS=off") for name in NAMES]
    assert not any(_installed().values())
    assert _replaced_are_the_sdks()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", NAMES)
def test_each_own_switch_keeps_its_meaning(name: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    var, value = SWITCHES[name]
    report = install_all(settings({var: value}))
    assert report[name].installed is False
    assert report[name].reason == f"{var}={value}"
    assert [e.name for e in report.not_installed] == [name]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("name", "function"), GUARDED,
                         ids=[f"{name}-{function}" for name, function in GUARDED])
def test_it_replaces_only_the_reviewed_sdk_functions(
        name: str, function: str, sdk_changed: Callable[[str, str], None],
        use_speedup: Callable[[str, Mapping[str, str]], bool]) -> None:
    # A function whose result a speed-up gives without replacing it (`stack_trace`'s
    # `_get_source_position_for_frame`) is hashed too: a change of it is a changed SDK.
    module = registry.module_of(registry.by_name(name))
    sdk = _replaced(name)
    var, value = SWITCHES[name]
    assert use_speedup(name, {var: value}) is False
    assert not module.installed()
    assert all(now is own for now, own in zip(_replaced(name), sdk, strict=True))
    sdk_changed(name, function)
    assert use_speedup(name, {}) is False
    assert not module.installed()
    assert all(now is own for now, own in zip(_replaced(name), sdk, strict=True))


def _one_warning(err: str, name: str, *what: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert f"SDK speed-up {name!r} not installed" in lines[0]
    for part in what:
        assert part in lines[0]


def test_a_changed_sdk_function_is_not_installed_and_said_once(
        sdk_changed: Callable[[str, str], None], capsys: pytest.CaptureFixture[str]) -> None:
    sdk_changed("plain_urn", "create_urn")
    report = install_all(settings({}))
    assert [e.name for e in report.not_installed] == ["plain_urn"]
    assert "pulumi.runtime.resource.create_urn changed" in report["plain_urn"].reason
    assert resource.create_urn is registry.module_of(
        registry.by_name("plain_urn")).sdk_functions()["create_urn"]
    _one_warning(capsys.readouterr().err, "plain_urn",
                 "pulumi.runtime.resource.create_urn changed", "reviewed on 3.259.0")


def test_a_missing_private_name_is_not_installed_and_said_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delattr(rpc, "_special_sig_key")
    report = install_all(settings({}))
    assert [e.name for e in report.not_installed] == ["kept_outputs"]
    assert not hasattr(rpc.transfer_properties, "sdk_transfer_properties")
    _one_warning(capsys.readouterr().err, "kept_outputs",
                 "pulumi.runtime.rpc._special_sig_key is missing")


def test_a_private_name_of_another_kind_is_not_installed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sdk_settings.SETTINGS, "outputs", [])
    report = install_all(settings({}))
    assert [e.name for e in report.not_installed] == ["outputs_wait"]
    _one_warning(capsys.readouterr().err, "outputs_wait",
                 "pulumi.runtime.settings.SETTINGS.outputs is a list, not set")


def test_a_getter_result_is_checked(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    class Manager:  # an RPC manager without the attributes the wait reads
        pass

    monkeypatch.setattr(sdk_settings, "_get_rpc_manager", Manager)
    assert install_all(settings({}))["outputs_wait"].installed is False
    _one_warning(capsys.readouterr().err, "outputs_wait",
                 "pulumi.runtime.settings._get_rpc_manager().rpcs is missing",
                 "_get_rpc_manager().unhandled_exception is missing")


def test_a_removed_sdk_function_is_said_not_raised(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delattr(resource, "create_urn")
    report = install_all(settings({}))
    assert [e.name for e in report.not_installed] == ["plain_urn"]
    _one_warning(capsys.readouterr().err, "plain_urn",
                 "pulumi.runtime.resource.create_urn is missing")


def test_an_unreadable_source_is_said_not_raised(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def unreadable(function: Callable[..., object]) -> str:
        raise OSError("could not get source code")

    monkeypatch.setattr(registry, "source_sha256", unreadable)
    report = install_all(settings({}))
    assert report.not_installed == list(report)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(NAMES)
    assert all("its source cannot be read" in line for line in lines)
