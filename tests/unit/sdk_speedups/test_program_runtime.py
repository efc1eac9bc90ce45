"""The program's runtime in one call: the collector and every SDK speed-up, with a
report of what is in place and why not."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sdk_speedups.registry import SPEEDUPS
from sdk_speedups.runtime import use_program_runtime

PARTS = ["gc", *(s.name for s in SPEEDUPS)]


@pytest.fixture(autouse=True)
def _thresholds_restored() -> Iterator[None]:
    """Python's thresholds, put back after each test (the SDK's own functions are, by
    `sdk_own` in conftest.py)."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_every_part_is_in_place_on_the_pinned_sdk(capsys: pytest.CaptureFixture[str]) -> None:
    report = use_program_runtime({})
    assert [e.name for e in report] == PARTS
    assert report.not_installed == [], str(report)
    assert str(report).splitlines() == [f"{name}: installed" for name in PARTS]
    assert capsys.readouterr().err == ""


def test_each_part_says_what_turned_it_off(capsys: pytest.CaptureFixture[str]) -> None:
    report = use_program_runtime({"KNATIVE_FLEET_GC": "python",
                                  "KNATIVE_FLEET_SDK_SPEEDUPS": "off"})
    assert [(e.name, e.reason) for e in report.not_installed] == [
        ("gc", "KNATIVE_FLEET_GC=python"),
        *((s.name, "KNATIVE_FLEET_SDK_SPEEDUPS=off") for s in SPEEDUPS)]
    assert capsys.readouterr().err == ""
