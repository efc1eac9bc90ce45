"""The SDK's debug messages are dropped unless asked for; the other levels never."""

from __future__ import annotations

import pulumi.log
import pytest

from core.sdk_debug import SDK_DEBUG_ENV, quiet_sdk_debug


@pytest.fixture(autouse=True)
def _restore(monkeypatch: pytest.MonkeyPatch) -> None:
    for level in ("debug", "info", "warn", "error"):
        monkeypatch.setattr(pulumi.log, level, getattr(pulumi.log, level))


def test_debug_is_dropped_and_the_other_levels_are_kept() -> None:
    before = {level: getattr(pulumi.log, level) for level in ("info", "warn", "error")}
    original = pulumi.log.debug
    assert quiet_sdk_debug({}) is True
    assert pulumi.log.debug is not original
    assert pulumi.log.debug("registering resource", None, None, None) is None
    assert {level: getattr(pulumi.log, level) for level in before} == before


def test_asking_for_them_keeps_the_sdk_as_it_is() -> None:
    original = pulumi.log.debug
    assert quiet_sdk_debug({SDK_DEBUG_ENV: "1"}) is False
    assert pulumi.log.debug is original
