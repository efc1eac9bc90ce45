"""The Pulumi Python SDK's own debug messages, sent only when asked for.

The SDK sends about four debug messages per resource to the engine ("registering
resource", "resource registration prepared", "... successful", "beginning rpc"), and
each is a blocking gRPC call on the program's event loop (`pulumi/log.py` sends a
message without a resource synchronously). The CLI shows them only with `--debug`,
yet sending them made a no-op preview of two spokes 1.2x slower (docs/performance.md,
"Engine and provider settings"). So they are dropped, unless `KNATIVE_FLEET_SDK_DEBUG=1`;
the program's own messages (info, warnings, errors) are never touched.
"""

from __future__ import annotations

from sdk_speedups.wrapping import Function, Wraps


def dropped_debug(sdk: Function) -> Function:
    """In the SDK's `pulumi.log.debug` place, which its modules call through
    `pulumi.log`: the messages go nowhere."""

    def debug(msg: str, resource: object = None, stream_id: int | None = None,
              ephemeral: bool | None = None) -> None:
        """`pulumi.log.debug`'s signature; the message goes nowhere."""

    return debug


WRAPS = Wraps("pulumi.log", {"debug": dropped_debug})
sdk_functions = WRAPS.sdk_functions
installed = WRAPS.installed
install = WRAPS.install
