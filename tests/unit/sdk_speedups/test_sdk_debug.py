"""The SDK's debug messages are dropped; the other levels never; and the SDK function
is the one it was checked against (its switch and guard: test_speedup_registry.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pulumi.log
import pytest

from sdk_speedups.registry import by_name, sdk_source_sha256

Use = Callable[[str, Mapping[str, str]], bool]


@pytest.fixture(autouse=True)
def _other_levels_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    for level in ("info", "warn", "error"):
        monkeypatch.setattr(pulumi.log, level, getattr(pulumi.log, level))


def test_the_sdk_function_is_the_reviewed_one() -> None:
    # Fails when the SDK's log.debug changes: review the replacement, then the hash.
    assert sdk_source_sha256(by_name("debug")) == by_name("debug").reviewed_sha256


def test_debug_is_dropped_and_the_other_levels_are_kept(use_speedup: Use) -> None:
    before = {level: getattr(pulumi.log, level) for level in ("info", "warn", "error")}
    original = pulumi.log.debug
    assert use_speedup("debug", {}) is True
    assert pulumi.log.debug is not original
    assert pulumi.log.debug("registering resource", None, None, None) is None
    assert {level: getattr(pulumi.log, level) for level in before} == before
