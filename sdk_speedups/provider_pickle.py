"""Each dynamic provider pickled by the SDK's own function, without its pickler patches
piling up.

`pulumi.dynamic.dynamic.serialize_provider` pickles a dynamic resource's provider with
dill through Python's pure-Python pickler, after putting a sorting `_batch_setitems`
and `save_dict` on `pickle._Pickler` so that dictionaries pickle in a stable order. It
never takes them off, and each call wraps the one the call before left: after n
dynamic resources, every dictionary pickled goes through n nested wrappers, each
sorting it again. The program time grows with the square of the dynamic resources, and
at about 970 of them in one process (about 90 spokes of 11) pickling a provider that
holds a function (the aggregated-role guards') exceeds Python's recursion limit and the
program fails.

The wrapper below calls the SDK's function as it is and then puts back the two methods
it found, so each call pickles through one sorting wrapper: the same bytes, in
constant time. Installed by `sdk_speedups.registry` only over the SDK it was checked
against (pulumi 3.259.0); `KNATIVE_FLEET_SDK_PICKLE=sdk` keeps the SDK's.
"""

from __future__ import annotations

import pickle
from typing import Any

from sdk_speedups.wrapping import Function, Wraps

PATCHED = ("_batch_setitems", "save_dict")  # what the SDK's function puts on the pickler


def restoring(sdk: Function) -> Function:
    """In the SDK's `serialize_provider` place, which its `Resource` calls through its
    module: the SDK's function, with the pickler's methods put back after it."""

    def serialize_provider(provider: Any) -> str:
        pickler = pickle._Pickler  # type: ignore[attr-defined]
        found = {name: pickler.__dict__[name] for name in PATCHED}
        try:
            return sdk(provider)
        finally:
            for name, method in found.items():
                setattr(pickler, name, method)

    return serialize_provider


WRAPS = Wraps("pulumi.dynamic.dynamic", {"serialize_provider": restoring})
sdk_functions = WRAPS.sdk_functions
installed = WRAPS.installed
install = WRAPS.install
