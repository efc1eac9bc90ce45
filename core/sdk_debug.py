"""The Pulumi Python SDK's own debug messages, sent only when asked for.

The SDK sends about four debug messages per resource to the engine ("registering
resource", "resource registration prepared", "... successful", "beginning rpc"), and
each is a blocking gRPC call on the program's event loop (`pulumi/log.py` sends a
message without a resource synchronously). The CLI shows them only with `--debug`,
yet sending them made a no-op preview of two spokes 1.2x slower (README, "Debug output
and caches"). So they are dropped, unless `KNATIVE_FLEET_SDK_DEBUG=1`;
the program's own messages (info, warnings, errors) are never touched.
"""

from __future__ import annotations

import os

SDK_DEBUG_ENV = "KNATIVE_FLEET_SDK_DEBUG"


def quiet_sdk_debug(environ: dict[str, str] | None = None) -> bool:
    """Drops the SDK's debug messages unless `KNATIVE_FLEET_SDK_DEBUG=1`; True if it did."""
    if (os.environ if environ is None else environ).get(SDK_DEBUG_ENV) == "1":
        return False
    import pulumi.log  # the SDK's modules call `log.debug` through this module

    pulumi.log.debug = _dropped
    return True


def _dropped(msg: str, resource: object = None, stream_id: int | None = None,
             ephemeral: bool | None = None) -> None:
    """`pulumi.log.debug`'s signature; the message goes nowhere."""
