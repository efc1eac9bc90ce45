"""The end-of-program wait: the same outcome as the SDK's (every output awaited, a failed
one raised, a failed registration let go), in one round per failure instead of one
per output; and it replaces the SDK function it was reviewed against unless the SDK's
is asked for (its guard: test_speedup_registry.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pulumi
import pytest
from pulumi.runtime import stack

from sdk_speedups import outputs_wait as sdk_outputs_wait
from sdk_speedups.registry import by_name, sdk_source_sha256
from tests.support.mocks import EchoMocks

OUTPUTS = 300
SDK_WAIT_ENV = "KNATIVE_FLEET_SDK_WAIT"
Use = Callable[[str, Mapping[str, str]], bool]


@pytest.fixture(autouse=True)
def _mocks() -> None:
    pulumi.runtime.set_mocks(EchoMocks(), preview=False)


@pytest.fixture()
def rounds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many `asyncio.wait` rounds the end-of-program wait made, and over how many."""
    seen: list[int] = []
    real_wait = asyncio.wait

    async def counting_wait(fs, *args, **kwargs):
        seen.append(len(fs))
        return await real_wait(fs, *args, **kwargs)

    monkeypatch.setattr(asyncio, "wait", counting_wait)
    return seen


async def _later(i: int, done: list[int]) -> int:
    """Done after i turns of the event loop, as engine responses arrive one by one."""
    for _ in range(i):
        await asyncio.sleep(0)
    done.append(i)
    return i


def _many_outputs(done: list[int]) -> None:
    """OUTPUTS outputs, each resolved only after the program body has returned, one
    after the other."""
    gate = pulumi.CustomResource("test:index:R", "gate", {"x": 1}).id
    for i in range(OUTPUTS):
        gate.apply(lambda _, i=i: _later(i, done))


def test_the_sdk_function_is_the_reviewed_one() -> None:
    # Fails when the SDK's wait_for_rpcs changes: review the copy, then its hash.
    assert (sdk_source_sha256(by_name("outputs_wait"))
            == by_name("outputs_wait").reviewed_sha256)


def test_installed_unless_the_sdk_one_is_asked_for(use_speedup: Use) -> None:
    original = stack.wait_for_rpcs
    assert use_speedup("outputs_wait", {SDK_WAIT_ENV: "sdk"}) is False
    assert stack.wait_for_rpcs is original
    assert use_speedup("outputs_wait", {}) is True
    assert stack.wait_for_rpcs is sdk_outputs_wait.wait_for_rpcs
    assert sdk_outputs_wait.sdk_functions()["wait_for_rpcs"] is original


@pytest.mark.parametrize("linear", [False, True], ids=["sdk", "linear"])
def test_every_output_is_awaited(linear: bool, rounds: list[int], use_speedup: Use) -> None:
    if linear:
        use_speedup("outputs_wait", {})
    done: list[int] = []
    pulumi.runtime.test(lambda: _many_outputs(done))()
    assert sorted(done) == list(range(OUTPUTS))
    if linear:
        assert len(rounds) <= 3, rounds
    else:
        # the SDK: a round per output or two, each over every pending one
        assert len(rounds) > OUTPUTS / 4, rounds[:5]


def test_a_failed_output_fails_the_program(use_speedup: Use) -> None:
    use_speedup("outputs_wait", {})

    def program() -> None:
        _many_outputs([])
        pulumi.Output.from_input(1).apply(lambda _: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        pulumi.runtime.test(program)()


def test_a_failed_registration_is_let_go_as_the_sdk_does(use_speedup: Use) -> None:
    use_speedup("outputs_wait", {})
    done: list[int] = []

    def program() -> None:
        _many_outputs(done)

        async def failed() -> None:
            raise stack.ResourceRegistrationFailed("reported by the engine")

        pulumi.Output.from_input(1).apply(lambda _: failed())

    pulumi.runtime.test(program)()
    assert len(done) == OUTPUTS
