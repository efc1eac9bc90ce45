"""A URN of plain strings is the SDK's URN, known, not secret, without resources; any
other input still takes the SDK's function; installed unless the SDK's is asked for,
over the SDK function it was checked against (its guard: test_speedup_registry.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest
from pulumi.runtime import resource

from sdk_speedups import plain_urn as sdk_plain_urn
from sdk_speedups.registry import by_name, sdk_source_sha256
from tests.support.mocks import EchoMocks

SDK = sdk_plain_urn.sdk_functions()["create_urn"]
SDK_URN_ENV = "KNATIVE_FLEET_SDK_URN"
PARENT = "urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke::spoke-1"
Use = Callable[[str, Mapping[str, str]], bool]


@pytest.fixture(autouse=True)
def _mocks() -> None:
    pulumi.runtime.set_mocks(EchoMocks(), project="knative-fleet", stack="demo", preview=False)


def _data(args: tuple) -> tuple[Any, bool, bool, set]:
    """Value, known, secret and resources of create_urn(*args), on a loop of its own."""
    async def run() -> tuple[Any, bool, bool, set]:
        out = resource.create_urn(*args)
        return (await out.future(), await out.is_known(), await out.is_secret(),
                await out.resources())
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(run())
    finally:
        loop.close()


def test_the_sdk_function_is_the_reviewed_one() -> None:
    # Fails when the SDK's create_urn changes: review the wrapper, then the hash.
    assert sdk_source_sha256(by_name("plain_urn")) == by_name("plain_urn").reviewed_sha256


def test_installed_unless_the_sdk_one_is_asked_for(use_speedup: Use) -> None:
    assert use_speedup("plain_urn", {SDK_URN_ENV: "sdk"}) is False
    assert resource.create_urn is SDK
    assert use_speedup("plain_urn", {}) is True
    assert resource.create_urn.sdk_create_urn is SDK


@pytest.mark.parametrize("args", [
    ("spoke-1:knative-serving/activator", "kubernetes:apps/v1:Deployment", PARENT),
    ("spoke-1", "knative-fleet:index:Spoke", None),
    ("spoke-1", "knative-fleet:index:Spoke", None, "other-project", "other-stack"),
    ("root", "pulumi:pulumi:Stack", ""),
    ("x", "t:index:T", "no-separator"),
], ids=["child", "top-level", "project-and-stack", "empty-parent", "odd-parent"])
def test_the_urn_is_the_sdks(args: tuple, use_speedup: Use) -> None:
    want = _data(args)
    use_speedup("plain_urn", {})
    assert resource.create_urn is not SDK
    assert _data(args) == want
    assert want[1:] == (True, False, set())


def test_an_output_name_takes_the_sdks_function(use_speedup: Use) -> None:
    args = (pulumi.Output.from_input("n"), "t:index:T", PARENT)
    want = _data(args)
    use_speedup("plain_urn", {})
    assert _data(args) == want
    assert want[0] == "urn:pulumi:demo::knative-fleet::knative-fleet:index:Spoke$t:index:T::n"
