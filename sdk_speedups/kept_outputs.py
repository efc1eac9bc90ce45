"""Only the outputs the program reads, for resources that say which ones they are.

For every resource, the engine sends back all of its output properties; the Python
SDK turns each of them into Python values (`pulumi.runtime.rpc.resolve_outputs`, a
coroutine-free but per-node walk of protobuf Structs) and gives the resource an
Output attribute per input key. A release object's outputs are the whole live object:
a CRD's schema, a Deployment's spec and status. The program reads only `metadata` of
them (the anchor's uid, a wave gate's digest), yet turning the rest into Python took
about a third of the program's time in a no-op preview.

A resource class that sets `kept_outputs` gets Output attributes for the names it
maps only, and the SDK turns only those outputs into Python values: each whole (the
name maps to None), or, for an object output, only the given fields of it (the name
maps to a frozenset of field names; `metadata` without its managedFields). They
resolve as the SDK resolves them, to the same values or to the object with only those
fields. Reading any other output of such a resource is an AttributeError, not a silent
None. The engine, the provider and the stack state still hold every output: only the
program's copy is smaller.

Installed by `sdk_speedups.registry` only over the SDK functions this was checked
against (pulumi 3.259.0); `KNATIVE_FLEET_SDK_OUTPUTS=sdk` keeps the SDK's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sdk_speedups.wrapping import Function, Wraps


def kept_outputs(res: Any) -> Mapping[str, frozenset[str] | None] | None:
    """What a resource keeps of its outputs (module docstring), or None: all of them."""
    return getattr(type(res), "kept_outputs", None)


def _only(struct: Any, kept: Mapping[str, frozenset[str] | None]) -> Any:
    """A copy of a protobuf Struct with only the kept fields, each whole or with only
    its kept fields when it is a plain object (not a secret or other special value)."""
    from google.protobuf import struct_pb2
    from pulumi.runtime.rpc import _special_sig_key  # marks a secret, asset or reference

    out = struct_pb2.Struct()
    for name, fields in kept.items():
        if name not in struct.fields:
            continue
        value = struct.fields[name]
        if (fields is None or value.WhichOneof("kind") != "struct_value"
                or _special_sig_key in value.struct_value.fields):
            out.fields[name].CopyFrom(value)
            continue
        inner = out.fields[name].struct_value
        inner.Clear()  # present and empty, even when none of its fields is there
        for field in fields:
            if field in value.struct_value.fields:
                inner.fields[field].CopyFrom(value.struct_value.fields[field])
    return out


def kept_transfer_properties(sdk: Function) -> Function:
    """The SDK's `transfer_properties` wrapped: an Output attribute for each kept
    output only (module docstring)."""

    def transfer_properties(res: Any, props: Any, custom: bool) -> Any:
        kept = kept_outputs(res)
        if kept is not None:
            props = {name: value for name, value in props.items() if name in kept}
        return sdk(res, props, custom)

    return transfer_properties


def kept_resolve_outputs(sdk: Function) -> Function:
    """The SDK's `resolve_outputs` wrapped: only what is kept of the outputs is turned
    into Python (module docstring)."""

    def resolve_outputs(res: Any, serialized_props: Any, outputs: Any, deps: Any,
                        resolvers: Any, custom: bool, *args: Any, **kwargs: Any) -> Any:
        kept = kept_outputs(res)
        if kept is not None:
            outputs = _only(outputs, kept)
            serialized_props = _only(serialized_props, kept)
        return sdk(res, serialized_props, outputs, deps, resolvers, custom, *args, **kwargs)

    return resolve_outputs


WRAPS = Wraps("pulumi.runtime.rpc", {"transfer_properties": kept_transfer_properties,
                                     "resolve_outputs": kept_resolve_outputs})
sdk_functions = WRAPS.sdk_functions
installed = WRAPS.installed
install = WRAPS.install
