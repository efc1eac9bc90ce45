"""The program's collector thresholds: raised by default, Python's own when asked."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sdk_speedups.collector import GC_ENV, YOUNG_THRESHOLD, use_program_gc


@pytest.fixture(autouse=True)
def python_thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def test_the_young_threshold_is_raised_and_the_older_ratios_kept() -> None:
    assert use_program_gc({}) is True
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.isenabled()


def test_python_thresholds_are_kept_when_asked(
        python_thresholds: tuple[int, int, int]) -> None:
    assert use_program_gc({GC_ENV: "python"}) is False
    assert gc.get_threshold() == python_thresholds


def test_the_collector_still_frees_cycles() -> None:
    use_program_gc({})

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    del a, b
    assert gc.collect() >= 2
