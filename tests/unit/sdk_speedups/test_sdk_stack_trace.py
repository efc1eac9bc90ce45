"""The per-resource stack trace: the same frames, URIs and lines as the SDK's, and the
SDK functions are the ones it was checked against (its switch and guard:
test_speedup_registry.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pulumi.runtime import resource
from pulumi.runtime.proto import source_pb2

from sdk_speedups import stack_trace as sdk_stack_trace
from sdk_speedups.registry import by_name, sdk_source_sha256
from sdk_speedups.stack_trace import stack_trace

SDK = sdk_stack_trace.sdk_functions()["_get_stack_trace"]
Use = Callable[[str, Mapping[str, str]], bool]


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
    assert ours.frames[0].pc.uri.endswith("/tests/unit/sdk_speedups/test_sdk_stack_trace.py")
    assert ours.frames[0].pc.line == _user_code.__code__.co_firstlineno + 1


def test_without_a_third_init_the_trace_is_empty_as_the_sdks() -> None:
    sdk, ours = Kind().traces
    assert ours == sdk == source_pb2.StackTrace()


def test_the_installed_sdk_is_the_reviewed_one(use_speedup: Use) -> None:
    """Fails on a new pulumi version: review `stack_trace` against its SDK functions."""
    assert use_speedup("stack_trace", {}) is True
    assert resource._get_stack_trace is stack_trace
    assert (sdk_source_sha256(by_name("stack_trace"))
            == by_name("stack_trace").reviewed_sha256)
