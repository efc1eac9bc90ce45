"""The per-resource stack trace: the same frames, URIs and lines as the SDK's, and it
replaces only the SDK function it was checked against."""

from __future__ import annotations

import pytest
from pulumi.runtime import resource
from pulumi.runtime.proto import source_pb2

from core import sdk_stack_trace
from core.sdk_stack_trace import SDK_STACK_ENV, stack_trace, use_frame_stack_trace

SDK = getattr(resource, "_sdk_get_stack_trace", resource._get_stack_trace)


@pytest.fixture(autouse=True)
def _sdk_function_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "_get_stack_trace", SDK)
    if hasattr(resource, "_sdk_get_stack_trace"):
        monkeypatch.delattr(resource, "_sdk_get_stack_trace")


def _both() -> tuple[source_pb2.StackTrace, source_pb2.StackTrace]:
    return SDK(), stack_trace()


class Base:  # Resource.__init__
    def __init__(self) -> None:
        self.traces = _both()


class Kind(Base):  # CustomResource.__init__
    def __init__(self) -> None:
        super().__init__()


class Concrete(Kind):  # the concrete resource's __init__
    def __init__(self) -> None:
        super().__init__()


def _user_code() -> tuple[source_pb2.StackTrace, source_pb2.StackTrace]:
    return Concrete().traces


def test_the_trace_of_a_resource_is_the_sdks() -> None:
    sdk, ours = _user_code()
    assert len(sdk.frames) > 3
    assert ours == sdk
    assert ours.frames[0].pc.uri.endswith("/tests/unit/core/test_sdk_stack_trace.py")
    assert ours.frames[0].pc.line == _user_code.__code__.co_firstlineno + 1


def test_without_a_third_init_the_trace_is_empty_as_the_sdks() -> None:
    sdk, ours = Kind().traces
    assert ours == sdk == source_pb2.StackTrace()


def test_it_replaces_only_the_reviewed_sdk_function(monkeypatch: pytest.MonkeyPatch) -> None:
    assert use_frame_stack_trace({SDK_STACK_ENV: "sdk"}) is False
    assert resource._get_stack_trace is SDK
    monkeypatch.setattr(sdk_stack_trace, "REVIEWED_SOURCE_SHA256", "0" * 64)
    assert use_frame_stack_trace({}) is False
    assert resource._get_stack_trace is SDK


def test_the_installed_sdk_is_the_reviewed_one() -> None:
    """Fails on a new pulumi version: review `stack_trace` against its SDK function."""
    assert use_frame_stack_trace({}) is True
    assert resource._get_stack_trace is stack_trace
    assert sdk_stack_trace.sdk_source_sha256() == sdk_stack_trace.REVIEWED_SOURCE_SHA256
