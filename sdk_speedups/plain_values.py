"""Plain values handed to the Python SDK's serializer as they are.

`pulumi.runtime.rpc.serialize_property` walks every input value as a coroutine per node,
so that it can await Outputs, resources and assets anywhere inside it. A spoke's release
objects are about 240 resources of plain nested dicts (a CRD's schema alone is thousands
of nodes): about 19,000 awaited calls per spoke, 16 % of the program's time under mocks.

For a dict or list made only of dicts, lists, strings, numbers, booleans and None, with
no type to translate names by and no key translator other than the identity, the SDK's
walk returns an equal tree: the same keys, the same values, nothing to await, no
dependency found. Such a value is returned at once; anything else (an Output anywhere
inside, a tuple, a typed input) takes the SDK's walk, which calls back into this
function for each of its parts, so the plain parts of a mixed value still go fast.

Installed by `sdk_speedups.registry` only over the serializer of the SDK this was
checked against (pulumi 3.259.0); `KNATIVE_FLEET_SDK_SERIALIZE=sdk` keeps the SDK's alone.
"""

from __future__ import annotations

from typing import Any

from sdk_speedups.wrapping import Function, Wraps

SCALARS = frozenset({str, int, float, bool, type(None)})


def is_plain(value: Any) -> bool:
    """True for a tree of exactly dicts with str keys, lists and JSON scalars."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    if kind is list:
        return all(is_plain(v) for v in value)
    return kind in SCALARS


def plain_serialize_property(sdk: Function) -> Function:
    """The SDK's `serialize_property` wrapped: a plain value is returned as it is, any
    other takes `sdk` (module docstring)."""
    from pulumi.resource import Resource

    # The base Resource's key translator returns its input: no translation.
    identity = Resource.translate_input_property

    async def serialize_property(value: Any, deps: Any, property_key: Any,
                                 resource_obj: Any = None, input_transformer: Any = None,
                                 typ: Any = None, keep_output_values: bool = False,
                                 exclude_resource_refs_from_deps: bool = False,
                                 return_protobuf_value: bool = False) -> Any:
        if (type(value) in (dict, list) and not return_protobuf_value
                and (typ is None or typ is Any)
                and (input_transformer is None
                     or getattr(input_transformer, "__func__", None) is identity)
                and is_plain(value)):
            return value
        return await sdk(value, deps, property_key, resource_obj, input_transformer, typ,
                         keep_output_values, exclude_resource_refs_from_deps,
                         return_protobuf_value)

    return serialize_property


WRAPS = Wraps("pulumi.runtime.rpc", {"serialize_property": plain_serialize_property})
sdk_functions = WRAPS.sdk_functions
installed = WRAPS.installed
install = WRAPS.install
