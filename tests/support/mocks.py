"""Pulumi mocks for unit tests of the program's own logic: no engine, no provider."""

from __future__ import annotations

import pulumi


class EchoMocks(pulumi.runtime.Mocks):
    """Every resource's outputs are its inputs, its id its name with `-id`; calls
    return nothing."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}
