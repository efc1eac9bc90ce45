"""The fields the API server fills into a CustomResourceDefinition when its manifest
leaves them out (apiextensions-apiserver v1 defaults: `spec.names.listKind` is the kind
and "List", `spec.conversion` is `{strategy: None}`, a conversion webhook's Service port
is 443), as plain data.

Why they matter: an `up` imports each CRD its component's CRDs-first step applied
(fleet.crds_first), and an import takes the CRD as the server stores it for the
resource's inputs. A typed resource whose inputs lack these fields then differs from
what it imported, and the engine updates every such CRD right after importing it: one
PUT of each CRD of the install, which the spoke validates in full. Registered with them,
the import is all an `up` does to a CRD the step applied.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

CRD_KIND = "CustomResourceDefinition"
WEBHOOK_SERVICE_PORT = 443


def server_defaults(crd: Mapping[str, Any]) -> dict[str, Any]:
    """The defaulted fields `crd` leaves out, nested as in the object ({} when none, or
    when it is not a CRD)."""
    if crd.get("kind") != CRD_KIND:
        return {}
    spec = crd.get("spec") or {}
    out: dict[str, Any] = {}
    names = spec.get("names") or {}
    if not names.get("listKind") and names.get("kind"):
        out["names"] = {"listKind": f"{names['kind']}List"}
    conversion = spec.get("conversion")
    if conversion is None:
        out["conversion"] = {"strategy": "None"}
    else:
        service = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if service is not None and service.get("port") is None:
            out["conversion"] = {"webhook": {"clientConfig": {"service": {
                "port": WEBHOOK_SERVICE_PORT}}}}
    return {"spec": out} if out else {}


def with_defaults(body: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with `defaults` filled in where it has no value (nested maps merged; a value
    `body` has is kept). Only the maps on the defaults' paths are new: the rest (a CRD's
    schemas) is `body`'s own, shared, as the plan's bodies are never changed in place."""
    out = dict(body)
    for key, value in defaults.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = with_defaults(out[key], value)
        elif out.get(key) is None:
            out[key] = copy.deepcopy(value)
    return out
