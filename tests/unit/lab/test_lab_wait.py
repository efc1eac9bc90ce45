"""The one wait helper: it returns what the condition found, and a timeout names what
was waited for."""

from __future__ import annotations

import pytest

from lab.wait import WaitTimeout, wait_for


def test_returns_the_first_truthy_value() -> None:
    answers = iter([None, "", "token"])
    assert wait_for(lambda: next(answers), timeout=5, interval=0.001) == "token"


def test_a_timeout_names_the_condition() -> None:
    calls = []

    def never() -> bool:
        calls.append(1)
        return False

    with pytest.raises(WaitTimeout, match="the CRD Established: not met in 0.05s"):
        wait_for(never, timeout=0.05, interval=0.01, what="the CRD Established")
    assert len(calls) >= 2  # polled, and looked once more at the deadline


def test_a_timeout_is_a_timeout_error() -> None:
    assert issubclass(WaitTimeout, TimeoutError)
