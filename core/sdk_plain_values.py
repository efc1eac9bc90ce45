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

Installed only over the serializer of the SDK this was checked against (pulumi 3.259.0,
by the sha256 of its source); `KNATIVE_FLEET_SDK_SERIALIZE=sdk` keeps the SDK's alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.sdk_review import may_replace, source_sha256

SDK_SERIALIZE_ENV = "KNATIVE_FLEET_SDK_SERIALIZE"
# sha256 of `inspect.getsource(pulumi.runtime.rpc.serialize_property)` in pulumi 3.259.0.
REVIEWED_SOURCE_SHA256 = "2d945490836b9c6822e8814f2b70ec5161ac6e729e21e08d3ed9cf626a4b39d6"
SCALARS = frozenset({str, int, float, bool, type(None)})


def sdk_source_sha256() -> str:
    return source_sha256(_sdk_serialize_property())


def _sdk_serialize_property() -> Callable[..., Any]:
    from pulumi.runtime import rpc

    return getattr(rpc.serialize_property, "sdk_serialize_property", rpc.serialize_property)


def is_plain(value: Any) -> bool:
    """True for a tree of exactly dicts with str keys, lists and JSON scalars."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    if kind is list:
        return all(is_plain(v) for v in value)
    return kind in SCALARS


def use_plain_values(environ: dict[str, str] | None = None) -> bool:
    """Wraps the SDK's `serialize_property` (module docstring); True if it did."""
    from pulumi.resource import Resource
    from pulumi.runtime import rpc

    # The base Resource's key translator returns its input: no translation.
    identity = Resource.translate_input_property
    if hasattr(rpc.serialize_property, "sdk_serialize_property"):
        return True
    sdk = rpc.serialize_property
    if not may_replace(SDK_SERIALIZE_ENV, environ, sdk, REVIEWED_SOURCE_SHA256):
        return False

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

    serialize_property.sdk_serialize_property = sdk  # type: ignore[attr-defined]
    rpc.serialize_property = serialize_property
    return True
