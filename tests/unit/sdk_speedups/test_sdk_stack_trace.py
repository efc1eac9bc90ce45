"""The per-resource stack trace: the innermost program frame of the SDK's, with the same URI
and line (so the same source position), and the
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


def _program_frame(frame: source_pb2.StackFrame) -> bool:
    return (frame.pc.uri.startswith("file://" + sdk_stack_trace.PROGRAM_ROOT)
            and "/.venv/" not in frame.pc.uri and "/site-packages/" not in frame.pc.uri)


def test_the_trace_of_a_resource_is_the_innermost_program_frame_of_the_sdks() -> None:
    sdk, ours = _user_code()
    assert len(sdk.frames) > 3
    program = [f for f in sdk.frames if _program_frame(f)]
    assert len(program) > 1, "the test's callers are the program's too"
    assert list(ours.frames) == program[:1]
    assert ours.frames[0] == sdk.frames[0]  # the source position the engine keeps
    assert ours.frames[0].pc.uri.endswith("/tests/unit/sdk_speedups/test_sdk_stack_trace.py")
    assert ours.frames[0].pc.line == _user_code.__code__.co_firstlineno + 1


def test_files_outside_the_program_are_not_its_own() -> None:
    root = sdk_stack_trace.PROGRAM_ROOT
    assert sdk_stack_trace.is_program_file(root + "components/spoke.py")
    assert not sdk_stack_trace.is_program_file(root + ".venv/lib/python3.11/x.py")
    assert not sdk_stack_trace.is_program_file("/usr/lib/python3.11/asyncio/events.py")
    assert not sdk_stack_trace.is_program_file(
        "/root/.cache/knative-fleet/bin/pulumi-language-python-exec")


def test_without_a_third_init_the_trace_is_empty_as_the_sdks() -> None:
    sdk, ours = Kind().traces
    assert ours == sdk == source_pb2.StackTrace()


def test_the_installed_sdk_is_the_reviewed_one(use_speedup: Use) -> None:
    """Fails on a new pulumi version: review `stack_trace` against its SDK functions."""
    assert use_speedup("stack_trace", {}) is True
    assert resource._get_stack_trace is stack_trace
    assert (sdk_source_sha256(by_name("stack_trace"))
            == by_name("stack_trace").reviewed_sha256)
