"""Plain values serialized as the SDK serializes them, without its walk; anything else
(Outputs, tuples, typed inputs) still through the SDK's; and the SDK serializer is
the one it was checked against (its switch and guard: test_speedup_registry.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest
from pulumi.runtime import rpc

from sdk_speedups import plain_values as sdk_plain_values
from sdk_speedups.plain_values import is_plain
from sdk_speedups.registry import by_name, sdk_source_sha256

SDK = sdk_plain_values.sdk_functions()["serialize_property"]
CRD_LIKE = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "labels": {"k": "v"}},
            "spec": {"n": 1, "f": 1.5, "b": False, "none": None, "list": [1, "two", [3.0]],
                     "schema": {"properties": {f"p{i}": {"type": "string"} for i in range(50)}}}}
Use = Callable[[str, Mapping[str, str]], bool]


def _serialize(value: Any, **kwargs: Any) -> tuple[Any, list]:
    """On a loop of its own, leaving the thread's current loop as it was (`asyncio.run`
    would unset it, and the SDK's mocks in later tests need one)."""
    deps: list = []

    async def run() -> Any:
        return await rpc.serialize_property(value() if callable(value) else value, deps,
                                            "p", **kwargs)
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run()), deps
    finally:
        loop.close()


def test_plain_is_exactly_dicts_lists_and_json_scalars() -> None:
    assert is_plain(CRD_LIKE)
    assert is_plain([]) and is_plain({}) and is_plain("s")
    assert not is_plain({"a": (1, 2)})
    assert not is_plain({1: "int key"})
    assert not is_plain({"a": [{"b": object()}]})


@pytest.mark.parametrize("value", [
    CRD_LIKE, [CRD_LIKE, {"x": None}], {"tuple": (1, 2)},
    lambda: {"out": pulumi.Output.from_input({"x": 1}), "plain": {"y": [2]}},
    lambda: [pulumi.Output.secret("s"), {"z": 3}],
], ids=["crd-like", "list", "tuple", "output-inside", "secret-inside"])
def test_the_result_is_the_sdks(value: Any, use_speedup: Use) -> None:
    want, want_deps = _serialize(value)
    assert use_speedup("plain_values", {}) is True
    got, got_deps = _serialize(value)
    assert got == want
    assert got_deps == want_deps


def test_a_plain_value_skips_the_walk(monkeypatch: pytest.MonkeyPatch,
                                      use_speedup: Use) -> None:
    use_speedup("plain_values", {})
    calls: list[Any] = []
    wrapper = rpc.serialize_property

    async def counting(value: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(value)
        return await wrapper(value, *args, **kwargs)

    monkeypatch.setattr(rpc, "serialize_property", counting)
    got, _ = _serialize(CRD_LIKE)
    assert got is CRD_LIKE and len(calls) == 1
    calls.clear()
    got, _ = _serialize(lambda: {"out": pulumi.Output.from_input(1), "plain": CRD_LIKE})
    assert got == {"out": 1, "plain": CRD_LIKE}
    assert len(calls) <= 4  # the value, its two entries, the Output's value: not the tree


def test_a_key_translator_takes_the_sdks_walk(use_speedup: Use) -> None:
    use_speedup("plain_values", {})
    got, _ = _serialize({"a_b": {"c_d": 1}}, input_transformer=str.upper)
    assert got == {"A_B": {"C_D": 1}}


def test_the_installed_sdk_is_the_reviewed_one(use_speedup: Use) -> None:
    """Fails on a new pulumi version: review the plain-value shortcut against it."""
    assert use_speedup("plain_values", {}) is True
    assert rpc.serialize_property.sdk_serialize_property is SDK
    assert (sdk_source_sha256(by_name("plain_values"))
            == by_name("plain_values").reviewed_sha256)
