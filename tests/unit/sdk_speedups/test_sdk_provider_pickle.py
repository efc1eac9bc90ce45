"""A dynamic provider pickled through the wrapper is the SDK's pickle, byte for byte, and
the pickler's methods are the ones it found after every call: a thousand dynamic
resources pickle as the first one does, where the SDK's own function fails."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping

import pytest
from pulumi.dynamic import dynamic

from components import aggregated_role_guard as guard
from sdk_speedups import provider_pickle

SDK = provider_pickle.sdk_functions()["serialize_provider"]


@pytest.fixture(autouse=True)
def pickler_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's function leaves its patches on the pickler: they go after each test."""
    for name in provider_pickle.PATCHED:
        monkeypatch.setattr(pickle._Pickler, name, pickle._Pickler.__dict__[name])


def _provider() -> guard._Provider:
    return guard._Provider(guard.settle_and_delete)


def test_the_same_bytes_as_the_sdks(
        use_speedup: Callable[[str, Mapping[str, str]], bool]) -> None:
    sdk = SDK(_provider())
    assert use_speedup("provider_pickle", {})
    assert dynamic.serialize_provider is not SDK
    assert dynamic.serialize_provider(_provider()) == sdk


def test_the_pickler_is_left_as_it_was_found(
        use_speedup: Callable[[str, Mapping[str, str]], bool]) -> None:
    before = {n: pickle._Pickler.__dict__[n] for n in provider_pickle.PATCHED}
    assert use_speedup("provider_pickle", {})
    first = dynamic.serialize_provider(_provider())
    for _ in range(1200):  # past the recursion limit of the SDK's own function
        assert dynamic.serialize_provider(_provider()) == first
    assert {n: pickle._Pickler.__dict__[n] for n in provider_pickle.PATCHED} == before


def test_the_sdks_own_function_piles_its_patches_up() -> None:
    """Why the wrapper is there: on the pinned SDK, each call wraps the last one's."""
    SDK(_provider())
    once = pickle._Pickler.__dict__["_batch_setitems"]
    SDK(_provider())
    assert pickle._Pickler.__dict__["_batch_setitems"] is not once
    assert once in (pickle._Pickler.__dict__["_batch_setitems"].__closure__[0].cell_contents,)


def test_the_switch_keeps_the_sdks(
        use_speedup: Callable[[str, Mapping[str, str]], bool]) -> None:
    assert not use_speedup("provider_pickle", {"KNATIVE_FLEET_SDK_PICKLE": "sdk"})
    assert dynamic.serialize_provider is SDK
