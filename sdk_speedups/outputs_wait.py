"""The Python SDK's end-of-program wait for outstanding outputs, in linear time.

At the end of a program, `pulumi.runtime.stack.wait_for_rpcs` waits for every pending
output with `asyncio.wait(pending, return_when=FIRST_COMPLETED)` in a loop: each round
adds and removes a done-callback on every still-pending task, and one round ends per
completed output. With one Python resource per Kubernetes object (about 240 per spoke,
each with several outputs), that is quadratic: a no-op preview of two spokes made 232
such rounds and 134,941 done-callbacks, and the cost grows with the square of the fleet.

`FIRST_EXCEPTION` keeps what the SDK's loop is for (a failed output is raised as soon as
it fails; a `ResourceRegistrationFailed` output is let go; outputs created while waiting
are picked up by the next round) with one round per failure instead of one per output.

`sdk_speedups.registry` replaces the SDK's own function only when its source is the one
this was written against (pulumi 3.259.0) and the SDK internals it reads are there: any
other version is left as it is, and a unit test fails so that the change is reviewed.
`KNATIVE_FLEET_SDK_WAIT=sdk` keeps the SDK's function.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

# The SDK's own function, kept when this module's is put in its place.
_sdk_own: dict[str, Callable[..., Any]] = {}


def sdk_functions() -> dict[str, Callable[..., Any]]:
    """The SDK's own `wait_for_rpcs`, whether or not it was replaced."""
    from pulumi.runtime import stack

    current = stack.wait_for_rpcs
    return {"wait_for_rpcs": _sdk_own["wait_for_rpcs"] if current is wait_for_rpcs
            else current}


def installed() -> bool:
    from pulumi.runtime import stack

    return stack.wait_for_rpcs is wait_for_rpcs


def install() -> None:
    """Puts `wait_for_rpcs` below in the SDK's place."""
    from pulumi.runtime import stack

    if installed():
        return
    _sdk_own["wait_for_rpcs"] = stack.wait_for_rpcs
    stack.wait_for_rpcs = wait_for_rpcs


async def wait_for_rpcs(await_all_outstanding_tasks: bool = True) -> None:
    """`pulumi.runtime.stack.wait_for_rpcs` of pulumi 3.259.0, its outputs awaited with
    `FIRST_EXCEPTION` (module docstring); the RPC part is the SDK's, unchanged."""
    from pulumi.runtime.settings import SETTINGS, _get_rpc_manager
    from pulumi.runtime.stack import ResourceRegistrationFailed

    rpc_manager = _get_rpc_manager()
    while True:
        while len(rpc_manager.rpcs) > 0:
            await asyncio.sleep(0)
            try:
                await rpc_manager.rpcs.pop()
            except Exception as exn:
                if rpc_manager.unhandled_exception is not None:
                    cause = rpc_manager.unhandled_exception.with_traceback(
                        rpc_manager.exception_traceback)
                    raise exn from cause
                raise

        if rpc_manager.unhandled_exception is not None:
            raise rpc_manager.unhandled_exception.with_traceback(
                rpc_manager.exception_traceback)

        if await_all_outstanding_tasks:
            while True:
                with SETTINGS.lock:
                    if len(SETTINGS.outputs) == 0:
                        break
                    pending: list[asyncio.Task] = list(SETTINGS.outputs)
                    SETTINGS.outputs.clear()

                done, not_done = await asyncio.wait(
                    pending, return_when=asyncio.FIRST_EXCEPTION)
                for task in done:
                    try:
                        await task
                    except ResourceRegistrationFailed:
                        pass  # the SDK lets these go: Output.recover is how they are seen

                if not_done:
                    with SETTINGS.lock:
                        for task in not_done:
                            SETTINGS.outputs.add(task)

        if len(rpc_manager.rpcs) == 0:
            break
