"""The Python SDK's stack trace for each resource, without reading source lines.

For every resource it registers, the SDK sends the engine the stack of the code that
created it (the engine keeps the innermost frame as the resource's source position).
`pulumi.runtime.resource._get_stack_trace` builds it with `traceback.extract_stack()`,
which also looks up the text of every line through `linecache`, text the trace never
carries, and then turns every frame's file name into a URI with `pathlib`: about 15 %
of the program's time under mocks, at about 240 resources per spoke.

The engine keeps the whole trace in the stack's state, for every resource: 15 frames each,
of which only the first four or so are this program's (the rest are the SDK's, asyncio's
and the language host's, the same for every resource), about 130 kB a spoke written again
at every checkpoint. Of the program's frames, all but the innermost are the same for
every resource (the pipeline's calls down to the spoke's registrar), about 40 kB a spoke
more. `stack_trace` below gives the innermost program frame of the SDK's trace (the
same file URI and line number, so the same source position, the one frame a resource
is told apart by), from the frame objects themselves, made as the SDK's
`_get_source_position_for_frame` makes it. Installed by
`sdk_speedups.registry` only over the SDK it was checked against (pulumi 3.259.0, both
functions); `KNATIVE_FLEET_SDK_STACK=sdk` keeps the SDK's.
"""

from __future__ import annotations

import functools
import pathlib
import sys
from collections.abc import Callable
from typing import Any

# The program's files: this repository's, outside its virtualenv.
PROGRAM_ROOT = str(pathlib.Path(__file__).resolve().parent.parent) + "/"
NOT_PROGRAM = (PROGRAM_ROOT + ".venv/", "/site-packages/")


@functools.lru_cache(maxsize=4096)
def is_program_file(filename: str) -> bool:
    """Whether a frame's file is the program's own (a trace keeps only those)."""
    return filename.startswith(PROGRAM_ROOT) and not any(
        part in filename for part in NOT_PROGRAM)


def sdk_functions() -> dict[str, Callable[..., Any]]:
    """The SDK's own `_get_stack_trace`, whether or not it was replaced, and the
    `_get_source_position_for_frame` that `source_position` gives the result of."""
    from pulumi.runtime import resource

    current = resource._get_stack_trace
    return {"_get_stack_trace": resource._sdk_get_stack_trace  # type: ignore[attr-defined]
            if current is stack_trace else current,
            "_get_source_position_for_frame": resource._get_source_position_for_frame}


@functools.lru_cache(maxsize=4096)
def source_position(filename: str, line: int | None) -> Any:
    """The SDK's `_get_source_position_for_frame` for one (file, line): None where it
    gives None (no file name, no line, a name that is not an absolute path)."""
    from pulumi.runtime.proto import source_pb2

    if filename == "" or line is None:
        return None
    try:
        uri = pathlib.Path(filename).as_uri()
    except BaseException:  # noqa: BLE001 - the SDK's own guard, kept as it is
        return None
    return source_pb2.SourcePosition(uri=uri, line=line)


def stack_trace() -> Any:
    """The innermost program frame outside the third `__init__` from the top of the
    stack (Resource, Custom/ComponentResource, then the concrete resource's), as the
    first program frame of `_get_stack_trace` of pulumi 3.259.0; an empty trace when
    there is no third `__init__` or no program frame outside it."""
    from pulumi.runtime.proto import source_pb2

    frame = sys._getframe(1)
    seen = 0
    while frame is not None:
        if frame.f_code.co_name == "__init__":
            seen += 1
            if seen == 3:
                break
        frame = frame.f_back
    if frame is None or frame.f_back is None:
        return source_pb2.StackTrace()
    frame = frame.f_back
    while frame is not None:
        if is_program_file(frame.f_code.co_filename):
            return source_pb2.StackTrace(frames=[source_pb2.StackFrame(
                pc=source_position(frame.f_code.co_filename, frame.f_lineno))])
        frame = frame.f_back
    return source_pb2.StackTrace()


def installed() -> bool:
    from pulumi.runtime import resource

    return resource._get_stack_trace is stack_trace


def install() -> None:
    """Puts `stack_trace` in the SDK's place (module docstring)."""
    from pulumi.runtime import resource

    if installed():
        return
    resource._sdk_get_stack_trace = resource._get_stack_trace  # type: ignore[attr-defined]
    resource._get_stack_trace = stack_trace
